"""Scheduled e-mail rules over the API: behind the plugin, every field, the rules across fields,
placeholder checks, the deprecated ``include_pending``."""

from __future__ import annotations

import pytest

from admit.sendmail.schemas import STATUSES
from tests.checkin import helpers as h
from tests.factories import World, assert_field_errors, auth
from tests.sendmail.helpers import enable_plugin, rules_url

ABSOLUTE = {
    "subject": {"en": "See you at {event}", "de": "Bis bald bei {event}"},
    "template": {"en": "Hello {name},\n\nyour order {order}: {url}"},
    "send_date": "2030-04-20T08:00:00Z",
}
RELATIVE = {
    "subject": "Tomorrow: {event}",
    "template": "Doors open {date}.",
    "date_is_absolute": False,
    "send_offset_days": 1,
    "send_offset_time": "09:30",
}


async def test_rules_need_the_plugin(client, world: World, factory):
    for method, url in (("get", rules_url(world)), ("get", rules_url(world, "1/"))):
        response = await client.request(method, url, headers=auth(world.admin))
        assert response.status_code == 403
        assert response.json() == {"detail": "The sendmail plugin is not enabled for this event."}
    response = await client.post(rules_url(world), json=ABSOLUTE, headers=auth(world.admin))
    assert response.status_code == 403
    # The alias of the reference enables it as well.
    await enable_plugin(factory, world.event, "pretix.plugins.sendmail")
    response = await client.post(rules_url(world), json=ABSOLUTE, headers=auth(world.admin))
    assert response.status_code == 201, response.text


async def test_rules_need_the_settings_permission(client, world: World, factory):
    await enable_plugin(factory, world.event)
    team = await factory.team(world.org, event_permissions=["event.orders:read"])
    token = await factory.token(team)
    assert (await client.get(rules_url(world), headers=auth(token))).status_code == 403
    response = await client.post(rules_url(world), json=ABSOLUTE, headers=auth(world.outsider))
    assert response.status_code == 403


async def test_create_defaults_read_update_delete(client, world: World, factory):
    await enable_plugin(factory, world.event)
    created = await client.post(rules_url(world), json=ABSOLUTE, headers=auth(world.admin))
    assert created.status_code == 201, created.text
    rule = created.json()
    assert rule == {
        "id": rule["id"],
        "enabled": True,
        "subject": ABSOLUTE["subject"],
        "template": ABSOLUTE["template"],
        "all_products": True,
        "limit_products": [],
        "include_pending": False,
        "restrict_to_status": ["p", "n__valid_if_pending"],
        "checked_in_status": None,
        "date_is_absolute": True,
        "send_date": "2030-04-20T08:00:00Z",
        "send_offset_days": None,
        "send_offset_time": None,
        "offset_to_event_end": False,
        "offset_is_after": False,
        "send_to": "orders",
    }
    url = rules_url(world, f"{rule['id']}/")
    assert (await client.get(url, headers=auth(world.admin))).json() == rule
    listed = (await client.get(rules_url(world), headers=auth(world.admin))).json()
    assert listed["count"] == 1 and listed["results"] == [rule]

    item = await h.ticket(factory, world.event)
    full = {
        **RELATIVE,
        "enabled": False,
        "all_products": False,
        "limit_products": [item.id],
        "restrict_to_status": ["p", "e", "n__pending_overdue"],
        "checked_in_status": "no_checkin",
        "offset_to_event_end": True,
        "offset_is_after": True,
        "send_to": "both",
    }
    put = await client.put(url, json=full, headers=auth(world.admin))
    assert put.status_code == 200, put.text
    body = put.json()
    assert body["subject"] == {"en": "Tomorrow: {event}"}
    # The absolute date is kept (PUT keeps what it omits), unused while the rule is relative.
    assert body["send_offset_time"] == "09:30:00" and body["send_date"] == rule["send_date"]
    for key in ("limit_products", "restrict_to_status", "checked_in_status", "send_to"):
        assert body[key] == full[key]
    assert body["enabled"] is False and body["offset_is_after"] is True

    patched = await client.patch(url, json={"send_offset_days": 3}, headers=auth(world.admin))
    assert patched.status_code == 200, patched.text
    assert patched.json()["send_offset_days"] == 3
    assert patched.json()["limit_products"] == [item.id]

    assert (await client.delete(url, headers=auth(world.admin))).status_code == 204
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404


async def test_rules_stay_in_their_event(client, world: World, factory):
    await enable_plugin(factory, world.event)
    await enable_plugin(factory, world.other_event)
    created = await client.post(rules_url(world), json=ABSOLUTE, headers=auth(world.admin))
    other = f"/api/v1/organizers/{world.other.slug}/events/{world.other_event.slug}/sendmail_rules/"
    response = await client.get(f"{other}{created.json()['id']}/", headers=auth(world.outsider))
    assert response.status_code == 404
    foreign = await h.ticket(factory, world.other_event)
    body = {**ABSOLUTE, "all_products": False, "limit_products": [foreign.id]}
    response = await client.post(rules_url(world), json=body, headers=auth(world.admin))
    assert_field_errors(response, "limit_products")


async def test_absolute_and_relative_need_their_fields(client, world: World, factory):
    await enable_plugin(factory, world.event)
    no_date = {k: v for k, v in ABSOLUTE.items() if k != "send_date"}
    response = await client.post(rules_url(world), json=no_date, headers=auth(world.admin))
    assert assert_field_errors(response, "send_date")["send_date"] == [
        "This field is required when date_is_absolute is true."
    ]
    for missing in ("send_offset_days", "send_offset_time"):
        body = {k: v for k, v in RELATIVE.items() if k != missing}
        response = await client.post(rules_url(world), json=body, headers=auth(world.admin))
        assert_field_errors(response, missing)
    # PATCH checks the merged state: switching to relative needs the offsets.
    created = await client.post(rules_url(world), json=ABSOLUTE, headers=auth(world.admin))
    url = rules_url(world, f"{created.json()['id']}/")
    response = await client.patch(url, json={"date_is_absolute": False}, headers=auth(world.admin))
    assert_field_errors(response, "send_offset_days", "send_offset_time")
    response = await client.patch(url, json={"send_date": None}, headers=auth(world.admin))
    assert_field_errors(response, "send_date")


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("Hi {nmae}", "{nmae}"),
        ("{order.secret}", "{order.secret}"),
        ("{name[0]}", "{name[0]}"),
        ("{event!r}", "{event!r}"),
        ("{date:>99}", "{date:>99}"),
        ("{}", "{}"),
        ("{0}", "{0}"),
        ("Open { brace", "not a valid template"),
        ("close } brace", "not a valid template"),
    ],
)
async def test_placeholders_are_checked_on_save(client, world: World, factory, text, named):
    await enable_plugin(factory, world.event)
    for field in ("subject", "template"):
        body = {**ABSOLUTE, field: {"en": "fine {event}", "de": text}}
        response = await client.post(rules_url(world), json=body, headers=auth(world.admin))
        errors = assert_field_errors(response, field)[field]
        assert any(named in message and message.startswith("de: ") for message in errors)


async def test_known_placeholders_and_escaped_braces_pass(client, world: World, factory):
    await enable_plugin(factory, world.event)
    text = "{event} {event_slug} {order} {order_email} {name} {url} {date} {organizer} {{x}}"
    body = {**ABSOLUTE, "subject": text, "template": text}
    response = await client.post(rules_url(world), json=body, headers=auth(world.admin))
    assert response.status_code == 201, response.text


async def test_restrict_to_status_values(client, world: World, factory):
    await enable_plugin(factory, world.event)
    body = {**ABSOLUTE, "restrict_to_status": [*STATUSES, "p"]}
    response = await client.post(rules_url(world), json=body, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    assert response.json()["restrict_to_status"] == list(STATUSES)
    assert response.json()["include_pending"] is True
    for bad in (["paid"], ["n"], [], "p", [None]):
        body = {**ABSOLUTE, "restrict_to_status": bad}
        response = await client.post(rules_url(world), json=body, headers=auth(world.admin))
        assert_field_errors(response, "restrict_to_status")


async def test_include_pending_maps_onto_restrict_to_status(client, world: World, factory):
    await enable_plugin(factory, world.event)
    body = {**ABSOLUTE, "include_pending": True}
    created = await client.post(rules_url(world), json=body, headers=auth(world.admin))
    assert created.status_code == 201, created.text
    assert created.json()["include_pending"] is True
    pending = "n__not_pending_approval_and_not_valid_if_pending"
    assert created.json()["restrict_to_status"] == ["p", "n__valid_if_pending", pending]
    url = rules_url(world, f"{created.json()['id']}/")
    patched = await client.patch(url, json={"include_pending": False}, headers=auth(world.admin))
    assert patched.json()["restrict_to_status"] == ["p", "n__valid_if_pending"]
    assert patched.json()["include_pending"] is False
    # Sent together, the current field wins.
    both = {"include_pending": True, "restrict_to_status": ["c"]}
    patched = await client.patch(url, json=both, headers=auth(world.admin))
    assert patched.json()["restrict_to_status"] == ["c"]
    assert patched.json()["include_pending"] is False


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"send_offset_time": 3600}, "send_offset_time"),
        ({"send_offset_time": "25:00"}, "send_offset_time"),
        ({"send_offset_time": "09:00+01:00"}, "send_offset_time"),
        ({"send_offset_days": -1}, "send_offset_days"),
        ({"send_offset_days": 10**12}, "send_offset_days"),
        ({"send_offset_days": True}, "send_offset_days"),
        ({"send_to": "everyone"}, "send_to"),
        ({"checked_in_status": "maybe"}, "checked_in_status"),
        ({"subject": ""}, "subject"),
        ({"subject": {"en": " "}}, "subject"),
        ({"template": None}, "template"),
        ({"template": {"en": 5}}, "template"),
        ({"limit_products": ["x"]}, "limit_products"),
        ({"limit_products": [2**40]}, "limit_products"),
        ({"send_date": "tomorrow"}, "send_date"),
    ],
)
async def test_bad_values_are_400(client, world: World, factory, change, field):
    await enable_plugin(factory, world.event)
    body = {**RELATIVE, **change}
    if field == "send_date":
        body["date_is_absolute"] = True
    response = await client.post(rules_url(world), json=body, headers=auth(world.admin))
    assert response.status_code == 400, response.text
    assert field in response.json()  # nested for a bad language value: {"template": {"en": []}}


async def test_garbage_in_every_field_is_never_a_500(client, world: World, factory):
    await enable_plugin(factory, world.event)
    created = await client.post(rules_url(world), json=ABSOLUTE, headers=auth(world.admin))
    url = rules_url(world, f"{created.json()['id']}/")
    junk = [None, 0, -1, 1.5, 2**70, "", "x", "{", True, [], [None], {}, {"en": None}, ["p", 7]]
    fields = [*created.json(), "unknown"]
    for field in fields:
        for value in junk:
            for method, target, base in (("post", rules_url(world), ABSOLUTE), ("patch", url, {})):
                response = await client.request(
                    method, target, json={**base, field: value}, headers=auth(world.admin)
                )
                assert response.status_code in (200, 201, 400), (field, value, response.text)
    for body in ([], "text", 5, None, [ABSOLUTE]):
        response = await client.post(rules_url(world), json=body, headers=auth(world.admin))
        assert response.status_code == 400


async def test_cloning_the_event_copies_its_rules(client, world: World, factory):
    await enable_plugin(factory, world.event)
    item = await h.ticket(factory, world.event)
    body = {**ABSOLUTE, "all_products": False, "limit_products": [item.id], "send_to": "both"}
    created = await client.post(rules_url(world), json=body, headers=auth(world.admin))
    assert created.status_code == 201, created.text
    new = {"name": {"en": "Summit 2031"}, "slug": "summit31", "date_from": "2031-05-01T10:00:00Z"}
    response = await client.post(h.event_url(world, "clone/"), json=new, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    url = f"/api/v1/organizers/{world.org.slug}/events/summit31/sendmail_rules/"
    [copy] = (await client.get(url, headers=auth(world.admin))).json()["results"]
    assert copy["id"] != created.json()["id"] and copy["send_to"] == "both"
    assert copy["subject"] == ABSOLUTE["subject"]
    assert len(copy["limit_products"]) == 1 and copy["limit_products"] != [item.id]
