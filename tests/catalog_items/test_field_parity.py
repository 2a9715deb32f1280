"""Item fields of the reference beyond the sale basics: sale-window display modes, hiding while
another item sells, memberships, reusable media and ticket validity; their choices, defaults,
references and cross-field rules, on create, PATCH, PUT and event cloning."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from admit.models import Event, Item, MembershipType, Quota
from tests.catalog_items.helpers import post, url
from tests.factories import World, auth

PARITY_DEFAULTS: dict[str, Any] = {
    "available_from_mode": "hide",
    "available_until_mode": "hide",
    "hidden_if_available": None,
    "hidden_if_item_available": None,
    "hidden_if_item_available_mode": "hide",
    "require_membership": False,
    "require_membership_types": [],
    "require_membership_hidden": False,
    "grant_membership_type": None,
    "grant_membership_duration_like_event": True,
    "grant_membership_duration_days": 0,
    "grant_membership_duration_months": 0,
    "media_policy": None,
    "media_type": None,
    "validity_mode": None,
    "validity_fixed_from": None,
    "validity_fixed_until": None,
    "validity_dynamic_duration_minutes": None,
    "validity_dynamic_duration_hours": None,
    "validity_dynamic_duration_days": None,
    "validity_dynamic_duration_months": None,
    "validity_dynamic_start_choice": False,
    "validity_dynamic_start_choice_day_limit": None,
    "program_times": [],
}


async def membership_type(factory, organizer_id: int, **fields: Any) -> int:
    async with factory.sessionmaker() as session:
        mt = MembershipType(organizer_id=organizer_id, name={"en": "Season"}, **fields)
        session.add(mt)
        await session.commit()
        return mt.id


async def quota(factory, event: Event) -> int:
    async with factory.sessionmaker() as session:
        q = Quota(event_id=event.id, name="Q", size=10)
        session.add(q)
        await session.commit()
        return q.id


async def raw_post(client, world: World, body: dict[str, Any]):
    return await client.post(
        url("items/"), json={"default_price": "1.00", **body}, headers=auth(world.admin)
    )


async def test_defaults_are_the_references(client, world: World):
    created = await post(client, world, "items/", {"name": "Plain"})
    assert {k: created[k] for k in PARITY_DEFAULTS} == PARITY_DEFAULTS


async def test_every_field_round_trips(client, world: World, factory):
    mt1 = await membership_type(factory, world.org.id)
    mt2 = await membership_type(factory, world.org.id, transferable=True)
    q = await quota(factory, world.event)
    other = await post(client, world, "items/", {"name": "Early"})
    body = {
        "name": "Late",
        "admission": True,
        "available_from_mode": "info",
        "available_until_mode": "info",
        "hidden_if_available": q,
        "hidden_if_item_available": other["id"],
        "hidden_if_item_available_mode": "info",
        "require_membership": True,
        "require_membership_types": [mt2, mt1],
        "require_membership_hidden": True,
        "grant_membership_type": mt1,
        "grant_membership_duration_like_event": False,
        "grant_membership_duration_days": 3,
        "grant_membership_duration_months": 12,
        "media_policy": "reuse_or_new",
        "media_type": "barcode",
        "validity_mode": "dynamic",
        "validity_fixed_from": None,
        "validity_fixed_until": None,
        "validity_dynamic_duration_minutes": 30,
        "validity_dynamic_duration_hours": 2,
        "validity_dynamic_duration_days": 1,
        "validity_dynamic_duration_months": 1,
        "validity_dynamic_start_choice": True,
        "validity_dynamic_start_choice_day_limit": 14,
        "program_times": [SLOT],
    }
    created = await post(client, world, "items/", body)
    expected = {k: v for k, v in body.items() if k in PARITY_DEFAULTS}
    expected["require_membership_types"] = sorted([mt1, mt2])  # listed by id
    assert {k: created[k] for k in PARITY_DEFAULTS} == expected
    got = (await client.get(url(f"items/{created['id']}/"), headers=auth(world.admin))).json()
    assert {k: got[k] for k in PARITY_DEFAULTS} == expected
    # An unrelated PATCH keeps everything.
    patched = await client.patch(
        url(f"items/{created['id']}/"), json={"position": 3}, headers=auth(world.admin)
    )
    assert patched.status_code == 200, patched.text
    assert {k: patched.json()[k] for k in PARITY_DEFAULTS} == expected
    patched = await client.patch(
        url(f"items/{created['id']}/"),
        json={
            "require_membership_types": [mt1],
            "validity_mode": "fixed",
            "validity_fixed_from": "2030-01-01T00:00:00Z",
            "validity_fixed_until": "2030-12-31T23:59:59Z",
        },
        headers=auth(world.admin),
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["require_membership_types"] == [mt1]
    assert patched.json()["validity_fixed_until"] == "2030-12-31T23:59:59Z"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("available_from_mode", "show"),
        ("available_until_mode", "hidden"),
        ("hidden_if_item_available_mode", ""),
        ("media_policy", "always"),
        ("media_type", "qr"),
        ("validity_mode", "forever"),
        ("grant_membership_duration_days", -1),
        ("validity_dynamic_duration_days", -5),
        ("validity_dynamic_start_choice_day_limit", "soon"),
        ("require_membership_types", [True]),
        ("grant_membership_type", True),
    ],
)
async def test_bad_values_are_field_errors(client, world: World, field: str, value: Any):
    response = await raw_post(client, world, {"name": "X", field: value})
    assert response.status_code == 400, response.text
    assert field in response.json()


async def test_membership_types_must_be_the_organizers(client, world: World, factory):
    foreign = await membership_type(factory, world.other.id)
    own = await membership_type(factory, world.org.id)
    response = await raw_post(
        client,
        world,
        {"name": "X", "require_membership": True, "require_membership_types": [own, foreign]},
    )
    assert response.status_code == 400
    assert response.json() == {
        "require_membership_types": [f'Invalid pk "{foreign}" - object does not exist.']
    }
    response = await raw_post(client, world, {"name": "X", "grant_membership_type": foreign})
    assert response.json() == {
        "grant_membership_type": [f'Invalid pk "{foreign}" - object does not exist.']
    }
    response = await raw_post(client, world, {"name": "X", "grant_membership_type": 2**40})
    assert response.status_code == 400


async def test_required_membership_needs_a_type(client, world: World):
    response = await raw_post(client, world, {"name": "X", "require_membership": True})
    assert response.status_code == 400
    assert "at least one valid membership type" in response.json()["require_membership_types"][0]


async def test_hidden_if_references_stay_in_the_event(client, world: World, factory):
    item = await post(client, world, "items/", {"name": "A"})
    async with factory.sessionmaker() as session:
        foreign_item = Item(event_id=world.other_event.id, name={"en": "F"})
        foreign_quota = Quota(event_id=world.other_event.id, name="F", size=1)
        session.add_all([foreign_item, foreign_quota])
        await session.commit()
        foreign_item_id, foreign_quota_id = foreign_item.id, foreign_quota.id
    response = await raw_post(
        client, world, {"name": "X", "hidden_if_item_available": foreign_item_id}
    )
    assert response.json() == {
        "hidden_if_item_available": [f'Invalid pk "{foreign_item_id}" - object does not exist.']
    }
    response = await raw_post(client, world, {"name": "X", "hidden_if_available": foreign_quota_id})
    assert "hidden_if_available" in response.json()
    response = await client.patch(
        url(f"items/{item['id']}/"),
        json={"hidden_if_item_available": item["id"]},
        headers=auth(world.admin),
    )
    assert response.status_code == 400
    assert "its own availability" in response.json()["hidden_if_item_available"][0]


async def test_deleting_the_referenced_item_clears_the_reference(client, world: World):
    first = await post(client, world, "items/", {"name": "A"})
    second = await post(
        client, world, "items/", {"name": "B", "hidden_if_item_available": first["id"]}
    )
    deleted = await client.delete(url(f"items/{first['id']}/"), headers=auth(world.admin))
    assert deleted.status_code == 204
    got = (await client.get(url(f"items/{second['id']}/"), headers=auth(world.admin))).json()
    assert got["hidden_if_item_available"] is None


async def test_validity_rules(client, world: World):
    backwards = await raw_post(
        client,
        world,
        {
            "name": "X",
            "validity_mode": "fixed",
            "validity_fixed_from": "2030-02-01T00:00:00Z",
            "validity_fixed_until": "2030-01-01T00:00:00Z",
        },
    )
    assert backwards.status_code == 400
    assert backwards.json() == {
        "validity_fixed_from": ["The start of validity must be before the end of validity."]
    }
    no_period = await raw_post(client, world, {"name": "X", "validity_mode": "dynamic"})
    assert no_period.status_code == 400
    assert "validity_dynamic_duration_months" in no_period.json()
    zero = await raw_post(
        client,
        world,
        {
            "name": "X",
            "validity_mode": "dynamic",
            "validity_dynamic_duration_days": 0,
        },
    )
    assert zero.status_code == 400
    ok = await raw_post(
        client,
        world,
        {
            "name": "X",
            "validity_mode": "dynamic",
            "validity_dynamic_duration_hours": 3,
        },
    )
    assert ok.status_code == 201


async def test_media_rules(client, world: World):
    no_type = await raw_post(client, world, {"name": "X", "media_policy": "new"})
    assert no_type.status_code == 400
    assert "media type" in no_type.json()["non_field_errors"][0]
    giftcard = await raw_post(
        client,
        world,
        {
            "name": "X",
            "issue_giftcard": True,
            "media_policy": "reuse",
            "media_type": "barcode",
        },
    )
    assert giftcard.status_code == 400
    assert "gift cards" in giftcard.json()["non_field_errors"][0]
    not_for_tickets = await raw_post(
        client,
        world,
        {
            "name": "X",
            "media_policy": "reuse",
            "media_type": "nfc_mf0aes",
        },
    )
    assert not_for_tickets.status_code == 400
    ok = await raw_post(
        client, world, {"name": "X", "media_policy": "new", "media_type": "nfc_uid"}
    )
    assert ok.status_code == 201


async def test_a_granted_or_required_type_cannot_be_deleted(client, world: World, factory):
    granted = await membership_type(factory, world.org.id)
    await post(client, world, "items/", {"name": "Pass", "grant_membership_type": granted})
    path = f"/api/v1/organizers/{world.org.slug}/membershiptypes/{granted}/"
    response = await client.delete(path, headers=auth(world.admin))
    assert response.status_code == 403
    required = await membership_type(factory, world.org.id)
    await post(
        client,
        world,
        "items/",
        {
            "name": "Members",
            "require_membership": True,
            "require_membership_types": [required],
        },
    )
    path = f"/api/v1/organizers/{world.org.slug}/membershiptypes/{required}/"
    assert (await client.delete(path, headers=auth(world.admin))).status_code == 403


async def test_cloning_copies_and_remaps(client, world: World, factory):
    mt = await membership_type(factory, world.org.id)
    q = await quota(factory, world.event)
    async with factory.sessionmaker() as session:
        quota_row = await session.get(Quota, q)
        assert quota_row is not None
    first = await post(client, world, "items/", {"name": "A"})
    second = await post(
        client,
        world,
        "items/",
        {
            "name": "B",
            "hidden_if_item_available": first["id"],
            "hidden_if_available": q,
            "require_membership": True,
            "require_membership_types": [mt],
            "grant_membership_type": mt,
            "validity_mode": "dynamic",
            "validity_dynamic_duration_days": 7,
            "available_from_mode": "info",
            "program_times": [SLOT],
        },
    )
    path = f"/api/v1/organizers/{world.org.slug}/events/"
    response = await client.post(
        f"{path}?clone_from={world.event.slug}",
        json={"name": {"en": "Copy"}, "slug": "copy", "date_from": "2031-01-01T10:00:00Z"},
        headers=auth(world.admin),
    )
    assert response.status_code == 201, response.text
    items = (await client.get(f"{path}copy/items/", headers=auth(world.admin))).json()["results"]
    copies = {i["name"]["en"]: i for i in items}
    copy_a, copy_b = copies["A"], copies["B"]
    assert copy_b["hidden_if_item_available"] == copy_a["id"] != first["id"]
    assert copy_b["require_membership_types"] == [mt]
    assert copy_b["grant_membership_type"] == mt
    assert copy_b["validity_dynamic_duration_days"] == 7
    assert copy_b["available_from_mode"] == "info"
    assert copy_b["program_times"] == [SLOT]
    quotas = (await client.get(f"{path}copy/quotas/", headers=auth(world.admin))).json()
    assert copy_b["hidden_if_available"] == quotas["results"][0]["id"] != q
    assert second["hidden_if_available"] == q
    async with factory.sessionmaker() as session:
        rows = (
            await session.execute(select(Item.id).where(Item.hidden_if_available_id == q))
        ).all()
        assert len(rows) == 1


SLOT = {"start": "2030-05-01T09:00:00Z", "end": "2030-05-01T11:30:00Z"}


async def test_program_times_round_trip(client, world: World):
    """The reference's ``program_times``: stored as sent (in UTC), shown on GET (list and
    detail), written by POST, PATCH and PUT; an omitted list is kept on PUT."""
    headers = auth(world.admin)
    later = {"start": "2030-05-02T19:00:00+02:00", "end": "2030-05-02T23:00:00+02:00"}
    created = await post(client, world, "items/", {"name": "Talk", "program_times": [SLOT, later]})
    utc_later = {"start": "2030-05-02T17:00:00Z", "end": "2030-05-02T21:00:00Z"}
    assert created["program_times"] == [SLOT, utc_later]
    path = url(f"items/{created['id']}/")
    assert (await client.get(path, headers=headers)).json()["program_times"] == [SLOT, utc_later]
    listed = (await client.get(url("items/"), headers=headers)).json()["results"]
    assert listed[0]["program_times"] == [SLOT, utc_later]
    patched = await client.patch(path, json={"program_times": [later]}, headers=headers)
    assert patched.status_code == 200, patched.text
    assert patched.json()["program_times"] == [utc_later]
    body = {"name": "Talk", "default_price": "0.00"}
    put = await client.put(path, json=body, headers=headers)
    assert put.json()["program_times"] == [utc_later]  # omitted: kept
    put = await client.put(path, json={**body, "program_times": []}, headers=headers)
    assert put.json()["program_times"] == []
    assert (await client.get(path, headers=headers)).json()["program_times"] == []


async def test_program_times_end_after_start(client, world: World):
    backwards = {"start": "2030-05-01T12:00:00Z", "end": "2030-05-01T11:00:00Z"}
    response = await raw_post(
        client,
        world,
        {"name": "Talk", "program_times": [SLOT, backwards, {**SLOT, "end": SLOT["start"]}]},
    )
    assert response.status_code == 400
    message = ["The end of a program time must be after its start."]
    assert response.json() == {"program_times": [{}, {"end": message}, {"end": message}]}
    response = await raw_post(
        client, world, {"name": "Talk", "program_times": [{"start": SLOT["start"]}]}
    )
    assert response.json() == {"program_times": [{"end": ["This field is required."]}]}
    response = await raw_post(
        client, world, {"name": "Talk", "program_times": [{"start": "soon", "end": SLOT["end"]}]}
    )
    assert list(response.json()["program_times"][0]) == ["start"]
    created = await post(client, world, "items/", {"name": "Talk", "program_times": [SLOT]})
    path = url(f"items/{created['id']}/")
    response = await client.patch(
        path, json={"program_times": [backwards]}, headers=auth(world.admin)
    )
    assert response.json() == {"program_times": [{"end": message}]}
