"""``Last-Modified`` / ``If-Modified-Since`` on the six catalog lists, from the event's
change stamp that every catalog write moves and sales do not."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select, update

from admit.kit.stamps.catalog import http_date, last_modified, next_stamp, not_modified
from admit.models import Event
from tests.conditional.recipes import E, Env, O
from tests.factories import auth

LISTS = ["categories", "items", "questions", "quotas", "subevents", "taxrules"]
PAST = dt.datetime(2025, 1, 1, 12, 0, 0, tzinfo=dt.UTC)


async def stamp(factory, slug: str = "summit") -> dt.datetime:
    async with factory.sessionmaker() as session:
        value = await session.scalar(select(Event.catalog_modified).where(Event.slug == slug))
    assert value is not None
    return value


async def set_stamp(factory, value: dt.datetime = PAST, slug: str | None = None) -> None:
    async with factory.sessionmaker() as session:
        statement = update(Event).values(catalog_modified=value)
        if slug is not None:
            statement = statement.where(Event.slug == slug)
        await session.execute(statement)
        await session.commit()


@pytest.mark.parametrize("kind", LISTS)
async def test_lists_answer_last_modified_and_304(client, world, factory, kind):
    h = auth(world.admin)
    await set_stamp(factory)
    url = f"{E}/{kind}/"
    first = await client.get(url, headers=h)
    assert first.status_code == 200
    assert first.headers["last-modified"] == "Wed, 01 Jan 2025 12:00:00 GMT"

    same = await client.get(url, headers={**h, "If-Modified-Since": first.headers["last-modified"]})
    assert same.status_code == 304
    assert same.content == b""
    assert same.headers["last-modified"] == first.headers["last-modified"]
    later = await client.get(
        url, headers={**h, "If-Modified-Since": http_date(PAST.replace(hour=13))}
    )
    assert later.status_code == 304

    for headers in (
        {"If-Modified-Since": "Wed, 01 Jan 2025 11:59:59 GMT"},  # older copy
        {"If-Modified-Since": "yesterday"},  # not a date: ignored
        {"If-Modified-Since": first.headers["last-modified"], "If-None-Match": '"x"'},
    ):
        response = await client.get(url, headers={**h, **headers})
        assert response.status_code == 200, headers
        assert response.json()["count"] == 0

    anonymous = await client.get(url, headers={"If-Modified-Since": first.headers["last-modified"]})
    assert anonymous.status_code == 401
    other = await client.get(
        url,
        headers={**auth(world.outsider), "If-Modified-Since": first.headers["last-modified"]},
    )
    assert other.status_code == 403


async def test_bad_filters_stay_400_with_if_modified_since(client, world, factory):
    await set_stamp(factory)
    headers = {**auth(world.admin), "If-Modified-Since": http_date(PAST)}
    response = await client.get(f"{E}/categories/?is_addon=maybe", headers=headers)
    assert response.status_code == 400, response.text


async def test_sales_dependent_lists_carry_no_last_modified(client, world, factory):
    h = auth(world.admin)
    await set_stamp(factory)
    since = {"If-Modified-Since": http_date(PAST)}
    response = await client.get(f"{E}/quotas/?with_availability=true", headers={**h, **since})
    assert response.status_code == 200 and "last-modified" not in response.headers
    response = await client.get(f"{E}/subevents/?with_availability_for=web", headers={**h, **since})
    assert response.status_code == 200 and "last-modified" not in response.headers


async def _assert_bumped(env: Env, action, slug: str = "summit") -> None:
    await set_stamp(env.factory)
    await action()
    after = await stamp(env.factory, slug)
    assert after.replace(microsecond=0) > PAST, after
    base = f"{O}/events/{slug}"
    kind = "subevents" if slug == "tour" else "items"
    headers = {**env.h, "If-Modified-Since": http_date(PAST)}
    assert (await env.client.get(f"{base}/{kind}/", headers=headers)).status_code == 200


async def test_every_catalog_write_moves_the_stamp(client, world, factory):
    env = Env(client, world, factory)
    item = await env.item()
    created: dict[str, int] = {}

    async def post(kind: str, body: dict) -> None:
        created[kind] = (await env.post(f"{E}/{kind}/", body))["id"]

    async def send(method: str, url: str, body: dict | None = None, status: int = 200) -> None:
        response = await client.request(method, url, json=body, headers=env.h)
        assert response.status_code == status, response.text

    actions = [
        lambda: post("categories", {"name": {"en": "C"}, "is_addon": True}),
        lambda: send("PATCH", f"{E}/items/{item}/", {"name": {"en": "Renamed"}}),
        lambda: post("taxrules", {"name": {"en": "VAT"}, "rate": "19.00"}),
        lambda: send("PATCH", f"{E}/taxrules/{created['taxrules']}/", {"default": True}),
        lambda: post("questions", {"question": {"en": "Q?"}, "type": "C", "identifier": "Q"}),
        lambda: env.post(
            f"{E}/questions/{created['questions']}/options/",
            {"answer": {"en": "A"}, "identifier": "A"},
        ),
        lambda: env.post(f"{E}/items/{item}/addons/", {"addon_category": created["categories"]}),
        lambda: env.post(f"{E}/items/{item}/bundles/", {"bundled_item": item}, status=400),
        lambda: post("quotas", {"name": "Q", "size": 3}),
        lambda: send("PATCH", f"{E}/quotas/{created['quotas']}/", {"size": 4}),
        lambda: send("DELETE", f"{E}/quotas/{created['quotas']}/", status=204),
        lambda: send("DELETE", f"{E}/questions/{created['questions']}/", status=204),
        lambda: send("DELETE", f"{E}/taxrules/{created['taxrules']}/", status=204),
        lambda: send("PATCH", f"{O}/events/summit/", {"name": {"en": "Summit 2"}}),
        lambda: post(
            "items",
            {
                "name": {"en": "Shirt"},
                "default_price": "5.00",
                "variations": [{"value": {"en": "S"}}],
            },
        ),
        lambda: env.post(f"{E}/items/{created['items']}/variations/", {"value": {"en": "M"}}),
    ]
    for index, action in enumerate(actions):
        if index == 7:  # a refused write writes nothing and moves nothing
            await set_stamp(factory)
            await action()
            assert await stamp(factory) == PAST
            continue
        await _assert_bumped(env, action)


async def test_subevent_and_meta_property_writes_move_the_stamp(client, world, factory):
    env = Env(client, world, factory)
    body = {"name": {"en": "T"}, "slug": "tour", "date_from": "2030-01-01T19:00:00Z"}
    await env.post(f"{O}/events/", {**body, "has_subevents": True})
    sub: dict[str, int] = {}

    async def create() -> None:
        date = {"name": {"en": "N"}, "date_from": "2030-02-01T19:00:00Z"}
        sub["id"] = (await env.post(f"{O}/events/tour/subevents/", date))["id"]

    async def patch() -> None:
        url = f"{O}/events/tour/subevents/{sub['id']}/"
        response = await client.patch(url, json={"name": {"en": "M"}}, headers=env.h)
        assert response.status_code == 200, response.text

    async def meta() -> None:
        await env.post(f"{O}/meta_properties/", {"name": "color", "default": "red"})

    for action in (create, patch, meta):
        await _assert_bumped(env, action, slug="tour")


async def test_sales_do_not_move_the_stamp(client, world, factory):
    env = Env(client, world, factory)
    item = await env.item()
    await set_stamp(factory)
    await env.post(f"{E}/orders/", {"email": "a@example.org", "positions": [{"item": item}]})
    await env.post(f"{E}/cartpositions/", {"item": item, "price": "10.00"})
    assert await stamp(factory) == PAST
    headers = {**env.h, "If-Modified-Since": http_date(PAST)}
    assert (await client.get(f"{E}/quotas/", headers=headers)).status_code == 304


async def test_a_write_right_after_a_read_is_seen():
    """Two writes within one second, and a read between them: the client's copy is stale."""
    first = dt.datetime(2030, 1, 1, 12, 0, 0, 100_000, tzinfo=dt.UTC)
    read_at = first + dt.timedelta(milliseconds=300)
    shown = last_modified(first, read_at)
    second = next_stamp(first, read_at + dt.timedelta(milliseconds=100))
    assert not not_modified({"if-modified-since": http_date(shown)}, second)
    # A transaction that took its time still lands after what was shown meanwhile.
    assert next_stamp(second, first).replace(microsecond=0) > second.replace(microsecond=0)
    # Last-Modified never shows a time after the clock.
    assert last_modified(second, first) == first.replace(microsecond=0)
