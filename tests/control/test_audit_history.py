"""The audit log (``audit/log.py``) and the History sections it fills: the event's settings,
categories, tax rules, questions (and their options), check-in lists, discounts, devices, teams
and webhooks, each change with who made it (an API token, a user of the back office); field
names only, never a secret's value; and not one statement more for the hot paths."""

from __future__ import annotations

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.engine import Engine

from admit.models import AuditEntry
from tests.control.conftest import E, _post, history_of, made_then_edited, sign_in
from tests.oauth.helpers import csrf

ORG = "/api/v1/organizers/acme"
AUTH = "Authorization"


async def _rows(factory) -> list[AuditEntry]:
    async with factory.sessionmaker() as session:
        return list((await session.scalars(select(AuditEntry).order_by(AuditEntry.id))).all())


@pytest.mark.parametrize(
    ("area", "api_path", "body", "form", "changed"),
    [
        ("categories", "categories", {"name": {"en": "Extras"}}, {"name": "More extras"},
         "Changed: name"),
        ("taxrules", "taxrules", {"name": {"en": "VAT"}, "rate": "19.00"},
         {"name": "VAT", "rate": "7.00"}, "Changed: rate"),
        ("questions", "questions",
         {"question": {"en": "Size?"}, "type": "S", "identifier": "SIZE", "items": []},
         {"question": "Shirt size?", "type": "S", "identifier": "SIZE"}, "Changed: question"),
        ("checkinlists", "checkinlists", {"name": "Side door", "all_products": True},
         {"name": "Back door", "all_products": "on"}, "Changed: name"),
        ("discounts", "discounts", {"internal_name": "Group", "condition_min_count": 3,
                                    "benefit_discount_matching_percent": "10.00"},
         {"internal_name": "Groups", "position": "0", "condition_min_count": "3",
          "condition_min_value": "0.00", "benefit_discount_matching_percent": "10.00",
          "active": "on", "condition_all_products": "on", "benefit_same_products": "on"},
         "Changed: internal name"),
    ],
)  # fmt: skip
async def test_api_and_back_office_changes_show_with_who_made_them(
    web, api, people, factory, shop, area, api_path, body, form, changed
):
    _made, history = await made_then_edited(
        web, api, people, factory, shop, area, api_path, body, form
    )
    assert "Created" in history and "API token" in history
    assert changed in history and "user Boss" in history
    assert history.index("Created") < history.index(changed)


async def test_a_question_option_is_a_change_of_its_question(web, api, people, factory, shop):
    question = await _post(api, shop.token, f"{E}/questions/",
                           {"question": {"en": "Meal?"}, "type": "C", "identifier": "MEAL",
                            "items": []})  # fmt: skip
    await _post(api, shop.token, f"{E}/questions/{question['id']}/options/",
                {"answer": {"en": "Vegan"}, "identifier": "VEGAN"})  # fmt: skip
    await sign_in(web, factory, people["boss"])
    history = history_of((await web.get(f"{shop.base}questions/{question['id']}/")).text)
    assert "Created" in history and "Changed: options" in history
    # the option's row is its question's change (no row of a type of its own)
    rows = [r for r in await _rows(factory) if r.object_type == "question"]
    assert [(r.action, r.fields) for r in rows if r.object_id == question["id"]] == [
        ("added", []),
        ("changed", ["options"]),
    ]
    assert {r.object_type for r in await _rows(factory)} <= {
        "event",
        "question",
        "team",
        "checkinlist",
    }


async def test_event_settings_page_shows_the_events_changes(web, api, people, factory, shop):
    headers = {AUTH: f"Token {shop.token}"}
    changed = await api.patch(f"{E}/settings/", json={"contact_mail": "desk@example.org"},
                              headers=headers)  # fmt: skip
    assert changed.status_code == 200, changed.text
    moved = await api.patch(f"{E}/", json={"location": {"en": "Hall 3"}}, headers=headers)
    assert moved.status_code == 200, moved.text
    await sign_in(web, factory, people["boss"])
    history = history_of((await web.get(f"{shop.base}settings/")).text)
    assert "Changed: settings.contact mail" in history and "API token" in history
    assert "Changed: location" in history
    # names, never values (a setting may be a payment provider's key)
    assert "desk@example.org" not in history
    rows = [r for r in await _rows(factory) if r.object_type == "event" and r.action == "changed"]
    assert [r.fields for r in rows] == [["settings.contact_mail"], ["location"]]


async def test_webhook_history_keeps_no_secret(web, api, people, factory, shop):
    made = await _post(api, shop.token, f"{ORG}/webhooks/",
                       {"target_url": "https://example.org/hook", "all_events": True,
                        "action_types": ["service.event.order.placed"]})  # fmt: skip
    headers = {AUTH: f"Token {shop.token}"}
    patched = await api.patch(f"{ORG}/webhooks/{made['id']}/", json={"enabled": False},
                              headers=headers)  # fmt: skip
    assert patched.status_code == 200, patched.text
    await sign_in(web, factory, people["boss"])
    history = history_of((await web.get(f"/control/organizer/acme/webhooks/{made['id']}/")).text)
    assert "Created" in history and "Changed: enabled" in history and "API token" in history
    rows = [r for r in await _rows(factory) if r.object_type == "webhook"]
    assert [r.action for r in rows] == ["added", "changed"]
    assert rows[1].fields == ["enabled"] and rows[0].actor_kind == "token"
    secret = made.get("secret")
    if secret:
        assert all(secret not in str(r.fields) for r in rows)


async def test_team_changes_in_the_back_office_name_the_user(web, api, people, factory, shop):
    made = await _post(api, shop.token, f"{ORG}/teams/", {"name": "Helpers"})
    await sign_in(web, factory, people["boss"])
    url = f"/control/organizer/acme/teams/{made['id']}/"
    token = csrf((await web.get(url)).text)
    saved = await web.post(url, data={"csrf_token": token, "name": "Crew"})
    assert saved.status_code == 303, saved.text[saved.text.find("<main") :][:1500]
    history = history_of((await web.get(url)).text)
    assert "Created" in history and "API token" in history
    assert "Changed: name" in history and "user Boss" in history


async def test_orders_write_no_audit_row_nor_statement(api, factory, shop):
    before = len(await _rows(factory))
    seen: list[str] = []

    def spy(conn, cursor, statement, parameters, context, executemany):
        if "audit_log" in statement:
            seen.append(statement)

    event.listen(Engine, "before_cursor_execute", spy)
    try:
        body = {"email": "dee@example.org", "payment_provider": "banktransfer",
                "positions": [{"item": shop.item, "attendee_name": "Dee"}]}  # fmt: skip
        order = await _post(api, shop.token, f"{E}/orders/", body)
        paid = await api.post(f"{E}/orders/{order['code']}/mark_paid/",
                              headers={AUTH: f"Token {shop.token}"})  # fmt: skip
        assert paid.status_code == 200, paid.text
        assert seen == []
        # the spy sees the log's statements where there are some
        await _post(api, shop.token, f"{E}/categories/", {"name": {"en": "Merch"}})
    finally:
        event.remove(Engine, "before_cursor_execute", spy)
    assert len(seen) == 1
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(AuditEntry)) == before + 1


async def test_device_history_names_the_device_and_keeps_no_token(web, api, people, factory, shop):
    made = await _post(api, shop.token, f"{ORG}/devices/", {"name": "Gate scanner",
                                                           "all_events": True})  # fmt: skip
    body = {"token": made["initialization_token"], "os_name": "Android"}
    paired = await api.post("/api/v1/device/initialize", json=body)
    assert paired.status_code == 200, paired.text
    token = paired.json()["api_token"]
    rolled = await api.post("/api/v1/device/roll", headers={AUTH: f"Device {token}"})
    assert rolled.status_code == 200, rolled.text
    await sign_in(web, factory, people["boss"])
    url = f"/control/organizer/acme/devices/{made['device_id']}/"
    history = history_of((await web.get(url)).text)
    assert "Created" in history and "API token" in history
    assert "Changed: initialized, api token hash, os name" in history
    assert "Changed: api token hash" in history and "device Gate scanner" in history
    rows = [r for r in await _rows(factory) if r.object_type == "device"]
    secrets = (token, rolled.json()["api_token"], made["initialization_token"])
    assert all(s not in str(r.fields) for r in rows for s in secrets)


async def test_an_object_made_with_its_children_is_one_row(api, factory, shop):
    body = {"question": {"en": "Diet?"}, "type": "C", "identifier": "DIET", "items": [],
            "options": [{"answer": {"en": "Vegan"}, "identifier": "V"},
                        {"answer": {"en": "Any"}, "identifier": "A"}]}  # fmt: skip
    made = await _post(api, shop.token, f"{E}/questions/", body)
    rows = [r for r in await _rows(factory) if r.object_type == "question"]
    assert [(r.object_id, r.action) for r in rows] == [(made["id"], "added")]
    assert rows[0].actor_kind == "token"


async def test_a_change_in_the_transaction_that_added_the_object_is_no_row(factory, shop):
    from admit.models import Event, TaxRule

    async with factory.sessionmaker() as session:
        summit = (await session.scalars(select(Event).where(Event.slug == "summit"))).one()
        rule = TaxRule(event_id=summit.id, name={"en": "VAT"}, rate=19)
        session.add(rule)
        await session.flush()
        rule.rate = 7
        await session.flush()
        await session.commit()
        rule.name = {"en": "Reduced VAT"}
        await session.commit()
    rows = [r for r in await _rows(factory) if r.object_type == "taxrule"]
    assert [(r.action, r.fields, r.actor_kind) for r in rows] == [
        ("added", [], None),
        ("changed", ["name"], None),
    ]
