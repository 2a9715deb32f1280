"""The scheduled exports API: create (users only), read, change, delete at both levels;
validation; who sees what."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from sqlalchemy import update

from admit.models import ScheduledExport
from tests.devices.helpers import device_auth, make_device
from tests.factories import World, assert_field_errors, auth
from tests.scheduled_exports.conftest import E, O, add_export, body, export_row, member
from tests.scheduled_exports.test_schedule import BAD_RULES

SETTINGS = ["event.settings.general:write", "event.orders:read"]
REFUSED = {"detail": "Creation of a scheduled export requires user-specific API access (OAuth)."}


async def test_a_user_creates_and_reads_an_event_export(client, world: World, factory, as_user):
    user = await member(factory, world, email="owner@example.org")
    response = await client.post(
        E,
        json=body(mail_additional_recipients="a@example.org,  b@example.org", locale="de"),
        headers=as_user(user),
    )
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["owner"] == "owner@example.org"
    assert created["error_counter"] == 0
    assert created["mail_additional_recipients"] == "a@example.org, b@example.org"
    assert created["schedule_rrule_time"] == "09:00:00"
    assert created["locale"] == "de"
    assert "timezone" not in created  # organizer level only
    # The event is in UTC: the next 09:00 UTC after now.
    next_run = dt.datetime.fromisoformat(created["schedule_next_run"])
    now = dt.datetime.now(dt.UTC)
    assert next_run > now and next_run - now <= dt.timedelta(days=1)
    assert (next_run.hour, next_run.minute) == (9, 0)
    detail = await client.get(f"{E}{created['id']}/", headers=as_user(user))
    assert detail.json() == created
    listed = await client.get(E, headers=as_user(user))
    assert listed.json()["results"] == [created]


async def test_next_run_is_in_the_events_time_zone(client, world: World, factory, as_user):
    event = await factory.event(world.org, "berlin", timezone="Europe/Berlin")
    user = await member(factory, world)
    url = f"/api/v1/organizers/acme/events/{event.slug}/scheduled_exports/"
    response = await client.post(url, json=body(), headers=as_user(user))
    assert response.status_code == 201, response.text
    local = dt.datetime.fromisoformat(response.json()["schedule_next_run"]).astimezone(
        zoneinfo.ZoneInfo("Europe/Berlin")
    )
    assert (local.hour, local.minute) == (9, 0)


@pytest.mark.parametrize("kind", ["admin token", "token", "device"])
async def test_tokens_and_devices_cannot_create(client, world: World, factory, kind):
    if kind == "device":
        _, secret = await make_device(factory, world.org)
        headers = device_auth(secret)
    else:
        token = world.admin if kind == "admin token" else None
        if token is None:
            token = await factory.token(await factory.team(world.org, event_permissions=SETTINGS))
        headers = auth(token)
    response = await client.post(E, json=body(), headers=headers)
    assert response.status_code == 403
    assert response.json() == REFUSED
    response = await client.post(O, json=body(export_identifier="test_events"), headers=headers)
    assert response.status_code == 403
    assert response.json() == REFUSED


async def test_creating_needs_some_permission_there(client, world: World, factory, as_user):
    user = await member(factory, world, event_permissions=[])
    response = await client.post(E, json=body(), headers=as_user(user))
    assert response.status_code == 403
    assert response.json() == {"detail": "You do not have permission to perform this action."}


async def test_the_exporters_permission_is_needed(client, world: World, factory, as_user):
    user = await member(factory, world)  # reads orders, not vouchers
    response = await client.post(
        E, json=body(export_identifier="test_vouchers"), headers=as_user(user)
    )
    errors = assert_field_errors(response, "export_identifier")
    assert "event.vouchers:read" in errors["export_identifier"][0]


# -- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "message"), BAD_RULES[::6])
async def test_bad_rules_are_refused(client, world: World, factory, as_user, rule, message):
    """A sample through the API (every rule is refused in test_schedule.py)."""
    user = await member(factory, world)
    response = await client.post(E, json=body(schedule_rrule=rule), headers=as_user(user))
    errors = assert_field_errors(response, "schedule_rrule")
    assert list(errors) == ["schedule_rrule"]
    assert message in errors["schedule_rrule"][0], errors


GOOD_RULES = [
    "DTSTART:20250106T000000\nRRULE:FREQ=WEEKLY;BYDAY=MO,FR",
    "dtstart:20250106\nrrule:freq=weekly;interval=2;byday=mo;wkst=su",
    "RRULE:FREQ=MONTHLY;BYDAY=-1FR\nDTSTART;TZID=Europe/Berlin:20250106T090000",
    "DTSTART:20250106T000000Z\r\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
    "DTSTART;VALUE=DATE:20250106\nRRULE:FREQ=YEARLY;BYMONTH=1,7;BYDAY=1MO",
    "DTSTART:20250106T000000\nRRULE:FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=0",
    "DTSTART:20250106T000000\nRRULE:FREQ=DAILY;COUNT=100000",
    "DTSTART:29990101T000000\nRRULE:FREQ=YEARLY",
]


async def test_good_rules_are_taken(client, world: World, factory, as_user):
    user = await member(factory, world)
    for rule in GOOD_RULES:
        response = await client.post(E, json=body(schedule_rrule=rule), headers=as_user(user))
        assert response.status_code == 201, response.text
        assert response.json()["schedule_rrule"] == rule
        assert response.json()["schedule_next_run"] is not None


async def test_a_rule_without_future_runs_has_no_next_run(client, world: World, factory, as_user):
    user = await member(factory, world)
    for rule in (
        "DTSTART:20200101T000000\nRRULE:FREQ=DAILY;COUNT=3",
        "DTSTART:20200101T000000\nRRULE:FREQ=DAILY;UNTIL=20200301T000000",
    ):
        response = await client.post(E, json=body(schedule_rrule=rule), headers=as_user(user))
        assert response.status_code == 201, response.text
        assert response.json()["schedule_next_run"] is None


FIELD_ERRORS = [
        ({"export_identifier": "nope"}, "export_identifier"),
        ({"export_identifier": "test_events"}, "export_identifier"),  # organizer level only
        ({"export_identifier": ""}, "export_identifier"),
        ({"export_form_data": "csv"}, "export_form_data"),
        ({"locale": "xx"}, "locale"),
        ({"locale": 5}, "locale"),
        ({"mail_additional_recipients": "a@example.org, not an e-mail"},
         "mail_additional_recipients"),
        ({"mail_additional_recipients_cc": "x@"}, "mail_additional_recipients_cc"),
        ({"mail_additional_recipients_bcc": "a@b@c"}, "mail_additional_recipients_bcc"),
        ({"mail_additional_recipients": ",".join(f"u{i}@example.org" for i in range(51))},
         "mail_additional_recipients"),
        ({"mail_subject": ""}, "mail_subject"),
        ({"mail_subject": "   "}, "mail_subject"),
        ({"mail_subject": "x" * 256}, "mail_subject"),
        ({"mail_template": None}, "mail_template"),
        ({"schedule_rrule": ""}, "schedule_rrule"),
        ({"schedule_rrule": 7}, "schedule_rrule"),
        ({"schedule_rrule_time": "25:00"}, "schedule_rrule_time"),
        ({"schedule_rrule_time": "09:00+02:00"}, "schedule_rrule_time"),
        ({"schedule_rrule_time": 900}, "schedule_rrule_time"),
        ({"schedule_rrule_time": None}, "schedule_rrule_time"),
    ]  # fmt: skip


async def test_field_errors(client, world: World, factory, as_user):
    user = await member(factory, world)
    for changes, field in FIELD_ERRORS:
        response = await client.post(E, json=body(**changes), headers=as_user(user))
        assert_field_errors(response, field)


async def test_form_data_errors_are_nested(client, world: World, factory, as_user):
    user = await member(factory, world)
    data = body(export_form_data={"format": "pdf", "min_size": "lots"})
    response = await client.post(E, json=data, headers=as_user(user))
    assert response.status_code == 400
    assert response.json() == {
        "export_form_data": {
            "format": ['"pdf" is not a valid choice.'],
            "min_size": ["A valid integer is required."],
        }
    }


async def test_required_fields(client, world: World, factory, as_user):
    user = await member(factory, world)
    response = await client.post(E, json={}, headers=as_user(user))
    errors = assert_field_errors(response)
    assert set(errors) == {
        "export_identifier",
        "mail_subject",
        "mail_template",
        "schedule_rrule",
        "schedule_rrule_time",
    }


# -- visibility ------------------------------------------------------------------------------


async def test_who_sees_what(client, world: World, factory, as_user):
    alice = await member(factory, world, email="alice@example.org")
    bob = await member(factory, world, email="bob@example.org")
    chief = await member(factory, world, event_permissions=SETTINGS)
    settings_token = await factory.token(await factory.team(world.org, event_permissions=SETTINGS))
    reader_token = await factory.token(
        await factory.team(world.org, event_permissions=["event.orders:read"])
    )
    created = await client.post(E, json=body(), headers=as_user(alice))
    assert created.status_code == 201
    own = created.json()["id"]
    bobs = (await client.post(E, json=body(), headers=as_user(bob))).json()["id"]

    async def visible(headers: dict[str, str]) -> list[int]:
        response = await client.get(E, headers=headers)
        assert response.status_code == 200, response.text
        return [r["id"] for r in response.json()["results"]]

    assert await visible(as_user(alice)) == [own]
    assert await visible(as_user(bob)) == [bobs]
    assert await visible(as_user(chief)) == [own, bobs]
    assert await visible(auth(settings_token)) == [own, bobs]
    assert await visible(auth(world.admin)) == [own, bobs]
    assert await visible(auth(reader_token)) == []
    assert await visible(auth(world.nobody)) == []

    # Another's export is as missing as a missing one, for every method.
    for headers in (as_user(bob), auth(reader_token)):
        for method in ("GET", "PATCH", "PUT", "DELETE"):
            response = await client.request(
                method,
                f"{E}{own}/",
                json=None if method in ("GET", "DELETE") else body(),
                headers=headers,
            )
            assert response.status_code == 404, (method, response.text)
    # A token cannot own an export, so it changes none; the settings permission (with the
    # exporter's) lets a user change anyone's, who then owns it.
    patched = await client.patch(
        f"{E}{own}/", json={"mail_subject": "By a token"}, headers=auth(settings_token)
    )
    assert patched.status_code == 403, patched.text
    mine = await client.patch(f"{E}{own}/", json={"locale": "fr"}, headers=as_user(alice))
    assert mine.status_code == 200 and mine.json()["locale"] == "fr"
    assert mine.json()["owner"] == "alice@example.org"
    patched = await client.patch(
        f"{E}{own}/", json={"mail_subject": "By the chief"}, headers=as_user(chief)
    )
    assert patched.status_code == 200 and patched.json()["owner"] == chief.email
    deleted = await client.delete(f"{E}{bobs}/", headers=auth(settings_token))
    assert deleted.status_code == 204
    assert (await client.get(f"{E}{bobs}/", headers=as_user(bob))).status_code == 404


@pytest.mark.parametrize("level", ["event", "organizer"])
async def test_a_settings_editor_cannot_redirect_anothers_export(
    client, clean_app, world: World, factory, as_user, level
):
    """The attack: a credential with the settings permission but not the exporter's changes
    the recipients of another user's export, which then mails the owner's data to them. Now
    403 for a token and for a user lacking the exporter's permission (nothing stored), and a
    user holding it becomes the owner, so the run uses the editor's own permissions."""
    settings = (
        {"event_permissions": ["event.settings.general:write"]}
        if level == "event"
        else {
            "event_permissions": [],
            "organizer_permissions": ["organizer.settings.general:write"],
        }
    )
    owner = await member(factory, world, email="owner@example.org")
    thief = await member(factory, world, email="thief@example.org", **settings)
    thief_token = await factory.token(await factory.team(world.org, **settings))
    if level == "event":
        url, export_id = E, await add_export(clean_app, owner, world.event)
    else:
        url, export_id = O, await add_export(clean_app, owner, None, organizer_id=world.org.id)
    url = f"{url}{export_id}/"
    hijack = {"mail_additional_recipients": "thief@example.org", "schedule_rrule_time": "10:00"}
    full = body(**hijack)
    if level == "organizer":
        full.update(export_identifier="test_events", export_form_data={}, timezone="UTC")
    assert (await client.get(url, headers=as_user(thief))).status_code == 200  # settings: sees it
    for headers in (as_user(thief), auth(thief_token)):
        response = await client.patch(url, json=hijack, headers=headers)
        assert response.status_code == 403, response.text
        response = await client.put(url, json=full, headers=headers)
        assert response.status_code == 403, response.text
    row = await export_row(clean_app, export_id)
    assert row.owner_id == owner.id and row.mail_additional_recipients == ""

    reader = await member(
        factory,
        world,
        email="reader@example.org",
        event_permissions=["event.orders:read", *settings["event_permissions"]],
        organizer_permissions=settings.get("organizer_permissions", []),
    )
    response = await client.patch(url, json=hijack, headers=as_user(reader))
    assert response.status_code == 200, response.text
    assert response.json()["owner"] == "reader@example.org"
    row = await export_row(clean_app, export_id)
    assert row.owner_id == reader.id and row.mail_additional_recipients == "thief@example.org"
    # The former owner no longer sees it (it is not theirs and they lack the settings).
    assert (await client.get(url, headers=as_user(owner))).status_code == 404


async def test_the_owner_needs_the_exporters_permission_to_change_it(
    client, clean_app, world: World, factory, as_user
):
    owner = await member(factory, world, event_permissions=["event.vouchers:read"])
    export_id = await add_export(clean_app, owner, world.event)  # test_quotas: orders:read
    response = await client.patch(
        f"{E}{export_id}/", json={"mail_subject": "x"}, headers=as_user(owner)
    )
    assert response.status_code == 403, response.text
    assert "event.orders:read" in response.json()["detail"]


async def test_other_tenants_and_levels_are_apart(
    client, clean_app, world: World, factory, as_user
):
    user = await member(factory, world, organizer_permissions=["organizer.settings.general:write"])
    other_user = await factory.user()
    at_event = await add_export(clean_app, user, world.event)
    at_org = await add_export(clean_app, user, None, organizer_id=world.org.id)
    elsewhere = await add_export(clean_app, other_user, world.other_event)
    assert [
        r["id"] for r in (await client.get(E, headers=auth(world.admin))).json()["results"]
    ] == [at_event]
    listed = (await client.get(O, headers=auth(world.admin))).json()["results"]
    assert [r["id"] for r in listed] == [at_org]
    for url in (f"{E}{at_org}/", f"{O}{at_event}/", f"{E}{elsewhere}/", f"{O}{elsewhere}/"):
        response = await client.get(url, headers=auth(world.admin))
        assert response.status_code == 404, url
    response = await client.get(
        f"/api/v1/organizers/rival/events/expo/scheduled_exports/{elsewhere}/",
        headers=auth(world.admin),
    )
    assert response.status_code == 403


# -- changes -------------------------------------------------------------------------------------


async def test_a_change_resets_the_counter_and_the_next_run(
    client, clean_app, world: World, factory, as_user
):
    user = await member(factory, world)
    app = clean_app
    created = (await client.post(E, json=body(), headers=as_user(user))).json()
    stale = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    async with app.state.db.sessionmaker() as session:
        await session.execute(
            update(ScheduledExport)
            .where(ScheduledExport.id == created["id"])
            .values(error_counter=5, schedule_next_run=stale)
        )
        await session.commit()
    shown = (await client.get(f"{E}{created['id']}/", headers=as_user(user))).json()
    assert shown["error_counter"] == 5
    # A PATCH that changes nothing still counts: it is how a stopped export starts again.
    response = await client.patch(f"{E}{created['id']}/", json={}, headers=as_user(user))
    assert response.status_code == 200
    assert response.json()["error_counter"] == 0
    assert response.json()["schedule_next_run"] == created["schedule_next_run"]
    response = await client.patch(
        f"{E}{created['id']}/",
        json={"schedule_rrule_time": "23:30", "error_counter": 3, "owner": "x@example.org"},
        headers=as_user(user),
    )
    changed = response.json()
    assert changed["schedule_rrule_time"] == "23:30:00"
    assert changed["error_counter"] == 0 and changed["owner"] == created["owner"]
    assert dt.datetime.fromisoformat(changed["schedule_next_run"]).time() == dt.time(23, 30)
    row = await export_row(app, created["id"])
    assert row.error_counter == 0


async def test_put_keeps_omitted_fields(client, world: World, factory, as_user):
    user = await member(factory, world)
    data = body(locale="de", mail_additional_recipients_cc="c@example.org")
    created = (await client.post(E, json=data, headers=as_user(user))).json()
    response = await client.put(
        f"{E}{created['id']}/",
        json={
            "export_identifier": "test_quotas",
            "mail_subject": "New",
            "mail_template": "Text",
            "schedule_rrule": "DTSTART:20250106T000000\nRRULE:FREQ=WEEKLY",
            "schedule_rrule_time": "06:00",
        },
        headers=as_user(user),
    )
    assert response.status_code == 200, response.text
    put = response.json()
    assert put["locale"] == "de" and put["mail_additional_recipients_cc"] == "c@example.org"
    assert put["export_form_data"] == created["export_form_data"]
    next_run = dt.datetime.fromisoformat(put["schedule_next_run"])
    assert next_run.weekday() == 0 and next_run.time() == dt.time(6)  # Mondays, UTC event
    response = await client.put(
        f"{E}{created['id']}/", json={"mail_subject": "x"}, headers=as_user(user)
    )
    assert_field_errors(response, "export_identifier", "schedule_rrule")


async def test_organizer_level_exports(client, world: World, factory, as_user):
    user = await member(factory, world)
    data = body(export_identifier="test_events", export_form_data={}, timezone="America/New_York")
    response = await client.post(O, json=data, headers=as_user(user))
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["timezone"] == "America/New_York"
    local = dt.datetime.fromisoformat(created["schedule_next_run"]).astimezone(
        zoneinfo.ZoneInfo("America/New_York")
    )
    assert local.time() == dt.time(9)
    url = f"{O}{created['id']}/"
    response = await client.patch(url, json={"timezone": "Asia/Tokyo"}, headers=as_user(user))
    assert response.status_code == 200
    local = dt.datetime.fromisoformat(response.json()["schedule_next_run"]).astimezone(
        zoneinfo.ZoneInfo("Asia/Tokyo")
    )
    assert local.time() == dt.time(9)
    for bad in ("Mars/Olympus", "", "../../etc/passwd", 5, None):
        response = await client.patch(url, json={"timezone": bad}, headers=as_user(user))
        assert_field_errors(response, "timezone")
    response = await client.post(O, json=body(), headers=as_user(user))  # an event exporter
    assert_field_errors(response, "export_identifier")
    assert (await client.delete(url, headers=as_user(user))).status_code == 204
    assert (await client.get(url, headers=as_user(user))).status_code == 404


async def test_organizer_level_visibility_follows_organizer_settings(
    client, clean_app, world: World, factory, as_user
):
    owner = await member(factory, world)
    event_chief = await member(factory, world, event_permissions=SETTINGS)
    org_chief = await member(
        factory, world, organizer_permissions=["organizer.settings.general:write"]
    )
    export_id = await add_export(clean_app, owner, None, organizer_id=world.org.id)

    async def visible(headers: dict[str, str]) -> list[int]:
        return [r["id"] for r in (await client.get(O, headers=headers)).json()["results"]]

    assert await visible(as_user(owner)) == [export_id]
    assert await visible(as_user(event_chief)) == []  # event settings are not enough here
    assert await visible(as_user(org_chief)) == [export_id]


async def test_ordering_and_pages(client, clean_app, world: World, factory, as_user):
    user = await member(factory, world)
    app = clean_app
    ids = [
        await add_export(app, user, world.event, export_identifier=name, schedule_next_run=when)
        for name, when in (
            ("test_quotas", dt.datetime(2030, 1, 3, tzinfo=dt.UTC)),
            ("test_broken", dt.datetime(2030, 1, 1, tzinfo=dt.UTC)),
            ("test_vouchers", dt.datetime(2030, 1, 2, tzinfo=dt.UTC)),
        )
    ]

    async def order(query: str) -> list[int]:
        response = await client.get(f"{E}?{query}", headers=as_user(user))
        assert response.status_code == 200, response.text
        return [r["id"] for r in response.json()["results"]]

    assert await order("") == ids
    assert await order("ordering=export_identifier") == [ids[1], ids[0], ids[2]]
    assert await order("ordering=-schedule_next_run") == [ids[0], ids[2], ids[1]]
    assert await order("ordering=-id") == ids[::-1]
    assert await order("ordering=owner") == await order("")  # unknown: ignored
    page = await client.get(f"{E}?page_size=2&page=2", headers=as_user(user))
    assert page.json()["count"] == 3 and [r["id"] for r in page.json()["results"]] == [ids[2]]
    assert (await client.get(f"{E}?page=3&page_size=2", headers=as_user(user))).status_code == 404


async def test_bad_ids_are_404(client, world: World):
    for bad in ("abc", "0", "-1", "1.0", "99999999999999999999", "%20"):
        for url in (f"{E}{bad}/", f"{O}{bad}/"):
            for method in ("GET", "PATCH", "PUT", "DELETE"):
                response = await client.request(method, url, json={}, headers=auth(world.admin))
                assert response.status_code == 404, (method, url, response.text)
                assert set(response.json()) == {"detail"}
