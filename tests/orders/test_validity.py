"""Ticket validity set at sale from the item's ``validity_mode``: fixed dates, or a dynamic
window from the sale (or a chosen start, within the day limit) in the event's time zone."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

from admit.orders.validity import compute
from tests.factories import auth
from tests.orders import helpers as h

UTC = dt.UTC
NOW = dt.datetime(2030, 3, 1, 12, 30, tzinfo=UTC)
BERLIN = SimpleNamespace(timezone="Europe/Berlin")


def _item(**kw):
    base = dict(
        validity_mode="dynamic",
        validity_fixed_from=None,
        validity_fixed_until=None,
        validity_dynamic_duration_minutes=None,
        validity_dynamic_duration_hours=None,
        validity_dynamic_duration_days=None,
        validity_dynamic_duration_months=None,
        validity_dynamic_start_choice=False,
        validity_dynamic_start_choice_day_limit=None,
    )
    base.update(kw)
    return SimpleNamespace(**base)


def test_no_mode_and_fixed():
    assert compute(_item(validity_mode=None), BERLIN, None, NOW) == (None, None)
    start, end = NOW, NOW + dt.timedelta(days=3)
    item = _item(validity_mode="fixed", validity_fixed_from=start, validity_fixed_until=end)
    assert compute(item, BERLIN, None, NOW) == (start, end)


def test_days_end_at_midnight_of_the_last_day_in_the_event_zone():
    start, end = compute(_item(validity_dynamic_duration_days=1), BERLIN, None, NOW)
    assert start == NOW
    assert end == dt.datetime(2030, 3, 1, 22, 59, 59, tzinfo=UTC)  # 23:59:59 CET
    _, end = compute(_item(validity_dynamic_duration_days=3), BERLIN, None, NOW)
    assert end == dt.datetime(2030, 3, 3, 22, 59, 59, tzinfo=UTC)


def test_months_from_the_first_end_on_the_last_of_the_month():
    _, end = compute(_item(validity_dynamic_duration_months=1), BERLIN, None, NOW)
    assert end == dt.datetime(2030, 3, 31, 21, 59, 59, tzinfo=UTC)  # CEST by then
    mid = dt.datetime(2030, 1, 25, 9, tzinfo=UTC)
    _, end = compute(_item(validity_dynamic_duration_months=1), BERLIN, None, mid)
    assert end == dt.datetime(2030, 2, 24, 22, 59, 59, tzinfo=UTC)
    _, end = compute(
        _item(validity_dynamic_duration_months=1, validity_dynamic_duration_days=2),
        BERLIN,
        None,
        mid,
    )
    assert end == dt.datetime(2030, 2, 26, 22, 59, 59, tzinfo=UTC)
    jan31 = dt.datetime(2030, 1, 31, 9, tzinfo=UTC)
    _, end = compute(_item(validity_dynamic_duration_months=1), BERLIN, None, jan31)
    assert end.date() == dt.date(2030, 2, 28)  # the 30th does not exist in February


def test_hours_and_minutes_are_exact():
    item = _item(validity_dynamic_duration_hours=2, validity_dynamic_duration_minutes=15)
    assert compute(item, BERLIN, None, NOW) == (NOW, NOW + dt.timedelta(hours=2, minutes=15))
    both = _item(validity_dynamic_duration_days=1, validity_dynamic_duration_hours=6)
    _, end = compute(both, BERLIN, None, NOW)
    assert end == dt.datetime(2030, 3, 2, 4, 59, 59, tzinfo=UTC)


def test_requested_start_only_with_choice_and_within_the_limit():
    later = NOW + dt.timedelta(days=20)
    plain = _item(validity_dynamic_duration_hours=1)
    assert compute(plain, BERLIN, later, NOW)[0] == NOW  # no choice: the sale starts it
    choice = _item(validity_dynamic_duration_hours=1, validity_dynamic_start_choice=True)
    assert compute(choice, BERLIN, later, NOW)[0] == later
    limited = _item(
        validity_dynamic_duration_hours=1,
        validity_dynamic_start_choice=True,
        validity_dynamic_start_choice_day_limit=7,
    )
    assert compute(limited, BERLIN, later, NOW)[0] == NOW + dt.timedelta(days=7)


async def test_order_positions_get_the_items_window(client, world, factory):
    fixed_from = dt.datetime(2030, 6, 1, tzinfo=UTC)
    fixed = await h.item(
        factory,
        world.event,
        validity_mode="fixed",
        validity_fixed_from=fixed_from,
        validity_fixed_until=fixed_from + dt.timedelta(days=10),
    )
    dynamic = await h.item(
        factory,
        world.event,
        validity_mode="dynamic",
        validity_dynamic_duration_hours=2,
        validity_dynamic_start_choice=True,
    )
    plain = await h.item(factory, world.event)
    wanted = "2031-01-01T10:00:00Z"
    body = {
        "email": "a@example.org",
        "positions": [
            {"item": fixed.id},
            {"item": dynamic.id, "requested_valid_from": wanted},
            {"item": plain.id},
            {"item": fixed.id, "valid_from": "2030-07-01T00:00:00Z"},  # the client decides
        ],
    }
    r = await client.post(h.url(world), json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    p = r.json()["positions"]
    assert (p[0]["valid_from"], p[0]["valid_until"]) == (
        "2030-06-01T00:00:00Z",
        "2030-06-11T00:00:00Z",
    )
    assert (p[1]["valid_from"], p[1]["valid_until"]) == (wanted, "2031-01-01T12:00:00Z")
    assert (p[2]["valid_from"], p[2]["valid_until"]) == (None, None)
    assert (p[3]["valid_from"], p[3]["valid_until"]) == ("2030-07-01T00:00:00Z", None)
    bad = await client.post(
        h.url(world),
        json={"positions": [{"item": dynamic.id, "requested_valid_from": "soon"}]},
        headers=auth(world.admin),
    )
    assert bad.status_code == 400
    assert "requested_valid_from" in bad.json()["positions"][0]
