"""``E/settings/``: the reference's event settings endpoint (issue 28: three clients call it,
two aborted on Admit's 404)."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from decimal import Decimal
from types import SimpleNamespace

import pytest

from admit.events.settings import EVENT_SETTINGS
from admit.models import Item
from admit.orders.rows import default_expires
from tests.factories import Factory, World, auth

EVENTS = "/api/v1/organizers/acme/events/"
SUMMIT = f"{EVENTS}summit/"
SETTINGS = f"{SUMMIT}settings/"


async def _patch(client, token: str, body: dict):
    return await client.patch(SETTINGS, json=body, headers=auth(token))


async def test_get_answers_every_key_with_its_default(client, world: World):
    r = await client.get(SETTINGS, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {s.key for s in EVENT_SETTINGS}
    assert body["payment_term_days"] == 14
    assert body["locales"] == ["en"] and body["locale"] == "en"
    assert body["attendee_names_asked"] is True
    assert body["attendee_emails_asked"] is False
    assert body["payment_banktransfer__enabled"] is False
    assert body["waiting_list_enabled"] is False
    assert body["waiting_list_hours"] == 48
    assert body["timezone"] == "UTC"
    assert body["imprint_url"] is None
    assert body["frontpage_text"] == {}
    assert body["invoice_generate"] == "False"


async def test_explain_adds_labels(client, world: World):
    r = await client.get(f"{SETTINGS}?explain=true", headers=auth(world.admin))
    entry = r.json()["payment_term_days"]
    assert entry["value"] == 14 and entry["label"] and entry["readonly"] is False


async def test_patch_changes_the_given_keys_and_keeps_the_others(client, world: World):
    body = {
        "payment_term_days": 3,
        "locales": ["en", "de"],
        "locale": "de",
        "contact_mail": "info@example.org",
        "imprint_url": "https://example.org/imprint",
        "frontpage_text": {"en": "Welcome", "de": "Willkommen"},
        "timezone": "Europe/Berlin",
        "payment_banktransfer__enabled": True,
        "payment_banktransfer_bank_details_sepa_iban": "DE02 1203 0000 0000 2020 51",
        "waiting_list_enabled": True,
        "cancel_allow_user": False,
    }
    r = await _patch(client, world.admin, body)
    assert r.status_code == 200, r.text
    again = (await client.get(SETTINGS, headers=auth(world.admin))).json()
    assert again == r.json()
    assert again["payment_term_days"] == 3
    assert again["locale"] == "de"
    assert again["payment_banktransfer_bank_details_sepa_iban"] == "DE02120300000000202051"
    assert again["attendee_names_asked"] is True  # untouched
    # The time zone is the event's own field: both resources show it.
    event = (await client.get(SUMMIT, headers=auth(world.admin))).json()
    assert event["timezone"] == "Europe/Berlin"
    # null resets a key to its default, as the reference's settings store does.
    r = await _patch(client, world.admin, {"payment_term_days": None, "contact_mail": None})
    assert r.json()["payment_term_days"] == 14 and r.json()["contact_mail"] is None
    assert r.json()["locale"] == "de"


async def test_bad_values_are_400_naming_each_key(client, world: World):
    r = await _patch(
        client,
        world.admin,
        {
            "payment_term_days": "soon",
            "timezone": "Mars/Olympus",
            "locales": ["en", "xx"],
            "invoice_generate": "sometimes",
            "attendee_names_asked": "perhaps",
            "contact_mail": "not an address",
            "imprint_url": "javascript:alert(1)",
            "payment_banktransfer_bank_details_sepa_iban": "DE00 1234",
        },
    )
    assert r.status_code == 400, r.text
    assert set(r.json()) == {
        "payment_term_days",
        "timezone",
        "locales",
        "invoice_generate",
        "attendee_names_asked",
        "contact_mail",
        "imprint_url",
        "payment_banktransfer_bank_details_sepa_iban",
    }
    assert all(isinstance(v, list) and v for v in r.json().values()), r.json()
    # Nothing was stored.
    assert (await client.get(SETTINGS, headers=auth(world.admin))).json()["timezone"] == "UTC"


async def test_rules_across_keys_are_checked_on_the_merged_state(client, world: World):
    r = await _patch(client, world.admin, {"locale": "de"})
    assert r.status_code == 400 and set(r.json()) == {"locale"}
    r = await _patch(client, world.admin, {"attendee_names_asked": False})
    assert r.status_code == 200
    r = await _patch(client, world.admin, {"attendee_names_required": True})
    assert r.status_code == 400 and set(r.json()) == {"attendee_names_required"}


async def test_unknown_keys_are_ignored_as_the_reference_does(client, world: World):
    r = await _patch(client, world.admin, {"payment_stripe__enabled": True, "locale": "en"})
    assert r.status_code == 200, r.text
    assert "payment_stripe__enabled" not in r.json()


async def test_permissions(client, world: World, factory: Factory):
    reader = await factory.token(
        await factory.team(world.org, event_permissions=["event.orders:read"])
    )
    general = await factory.token(
        await factory.team(world.org, event_permissions=["event.settings.general:write"])
    )
    assert (await client.get(SETTINGS, headers=auth(reader))).status_code == 200
    assert (await _patch(client, reader, {"locale": "en"})).status_code == 403
    assert (await _patch(client, general, {"attendee_emails_asked": True})).status_code == 200
    r = await _patch(client, general, {"payment_term_days": 2, "attendee_emails_asked": False})
    assert r.status_code == 403 and "payment_term_days" in r.json()["detail"]
    after = (await client.get(SETTINGS, headers=auth(reader))).json()
    assert after["payment_term_days"] == 14 and after["attendee_emails_asked"] is True
    assert (await client.get(SETTINGS, headers=auth(world.outsider))).status_code == 403


async def test_waiting_list_settings_share_one_storage(client, world: World):
    old = f"{SUMMIT}waitinglist_settings/"
    r = await _patch(client, world.admin, {"waiting_list_auto": True, "waiting_list_hours": 5})
    assert r.status_code == 200, r.text
    assert (await client.get(old, headers=auth(world.admin))).json() == {
        "auto_assign": True,
        "voucher_hours": 5,
    }
    await client.patch(old, json={"voucher_hours": 7}, headers=auth(world.admin))
    assert (await client.get(SETTINGS, headers=auth(world.admin))).json()["waiting_list_hours"] == 7
    r = await _patch(client, world.admin, {"waiting_list_hours": 0})
    assert r.status_code == 400 and set(r.json()) == {"waiting_list_hours"}


async def test_clone_copies_the_settings(client, world: World):
    await _patch(
        client, world.admin, {"payment_term_days": 4, "waiting_list_auto": True, "locale": "en"}
    )
    body = {"name": "Copy", "slug": "copy", "date_from": "2031-01-01T10:00:00Z"}
    r = await client.post(f"{SUMMIT}clone/", json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    copied = (await client.get(f"{EVENTS}copy/settings/", headers=auth(world.admin))).json()
    assert copied["payment_term_days"] == 4 and copied["waiting_list_auto"] is True


async def test_payment_term_days_sets_when_new_orders_expire(client, world: World, factory):
    item = await factory._add(
        Item(event_id=world.event.id, name={"en": "Ticket"}, default_price=Decimal("10.00"))
    )
    await factory.quota(world.event, items=[item])
    plain_days = {"payment_term_days": 2, "payment_term_weekdays": False}
    await _patch(client, world.admin, {**plain_days, "timezone": "Europe/Berlin"})
    r = await client.post(
        f"{SUMMIT}orders/",
        json={"email": "a@example.org", "positions": [{"item": item.id}]},
        headers=auth(world.admin),
    )
    assert r.status_code == 201, r.text
    expires = dt.datetime.fromisoformat(r.json()["expires"])
    berlin = zoneinfo.ZoneInfo("Europe/Berlin")
    today = dt.datetime.now(berlin).date()
    assert expires.astimezone(berlin).date() == today + dt.timedelta(days=2)
    assert expires.astimezone(berlin).time() == dt.time(23, 59, 59)
    last = (today + dt.timedelta(days=1)).isoformat()
    await _patch(client, world.admin, {"payment_term_last": last})
    r = await client.post(
        f"{SUMMIT}orders/",
        json={"email": "a@example.org", "positions": [{"item": item.id}]},
        headers=auth(world.admin),
    )
    expires = dt.datetime.fromisoformat(r.json()["expires"])
    assert expires.astimezone(berlin).date().isoformat() == last


@pytest.mark.parametrize(
    ("placed", "settings", "ends"),
    [
        # 2026-12-01 is a Tuesday: 4 days later is Saturday the 5th, moved to Monday the 7th.
        ("2026-12-01", {"payment_term_days": 4}, "2026-12-07"),
        ("2026-12-01", {"payment_term_days": 5}, "2026-12-07"),  # Sunday -> Monday
        ("2026-12-01", {"payment_term_days": 3}, "2026-12-04"),  # Friday stays
        ("2026-12-01", {"payment_term_days": 4, "payment_term_weekdays": False}, "2026-12-05"),
        # The last date of payments is kept even when it falls on a weekend.
        ("2026-12-01", {"payment_term_days": 4, "payment_term_last": "2026-12-05"}, "2026-12-05"),
    ],
)
def test_payment_terms_end_on_weekdays_unless_switched_off(
    placed: str, settings: dict, ends: str
) -> None:
    event = SimpleNamespace(timezone="Europe/Berlin", settings=settings)
    now = dt.datetime.fromisoformat(f"{placed}T10:00:00+01:00")
    expires = default_expires(event, now).astimezone(zoneinfo.ZoneInfo("Europe/Berlin"))
    assert expires.date().isoformat() == ends and expires.time() == dt.time(23, 59, 59)


async def test_percentages_read_as_decimal_text(client, world: World):
    r = await client.get(SETTINGS, headers=auth(world.admin))
    assert r.json()["cancel_allow_user_paid_keep_percentage"] == "0.00"
    r = await _patch(client, world.admin, {"cancel_allow_user_paid_keep_percentage": 12.5})
    assert r.status_code == 200 and r.json()["cancel_allow_user_paid_keep_percentage"] == "12.50"
    for bad in ["lots", 101, True, "NaN"]:
        r = await _patch(client, world.admin, {"cancel_allow_user_paid_keep_percentage": bad})
        assert r.status_code == 400 and "cancel_allow_user_paid_keep_percentage" in r.json()
