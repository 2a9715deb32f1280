"""The quota availability export (``quotalist``): every quota with what takes from it, the
same numbers the availability endpoint counts."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import select, update

from admit.db import utcnow
from admit.models import CartPosition, Event, Quota, SubEvent, Voucher, WaitingListEntry
from admit.quotas import availability, ledger
from tests.checkin import helpers as h
from tests.exports.jobrun import by_header, csv_rows, result, run_export, xlsx_rows
from tests.factories import Factory, World


async def build(factory: Factory, world: World):
    event = world.event
    ticket = await h.ticket(factory, event, "Ticket")
    shirt = await h.ticket(factory, event, "Shirt")
    red = await h.variation(factory, shirt, "Red")
    await h.variation(factory, shirt, "Blue")
    main = await factory.quota(event, 10, items=[ticket], name="Main")
    reds = await factory.quota(event, None, items=[shirt], variations=[red], name="Red shirts")
    closed = await factory.quota(event, 5, items=[ticket], name="Closed one", closed=True)
    await h.order(factory, event, ticket, n=2)
    await h.order(factory, event, ticket, status="n")
    await h.order(factory, event, ticket, status="c")
    await h.order(factory, event, shirt, variation=red)
    async with factory.sessionmaker() as s:
        s.add(
            Voucher(
                event_id=event.id, code="BLOCK3", max_usages=3, block_quota=True, quota_id=main.id
            )
        )
        expires = utcnow() + dt.timedelta(hours=1)
        s.add(
            CartPosition(
                event_id=event.id,
                cart_id="c1",
                item_id=ticket.id,
                price=Decimal("23.00"),
                expires=expires,
            )
        )
        s.add(WaitingListEntry(event_id=event.id, email="w@x.org", item_id=ticket.id))
        await s.flush()
        await ledger.rebuild(s)
        await s.commit()
    return main, reds, closed


async def test_quota_numbers(clean_app, background, factory, world):
    main, _reds, _closed = await build(factory, world)
    job = await run_export(
        clean_app, world.admin, "quotalist", {"_format": "xlsx"}, organizer=world.org,
        event=world.event,
    )  # fmt: skip
    rows = {r["Quota name"]: r for r in by_header(xlsx_rows(await result(background, job)))}
    assert set(rows) == {"Main", "Red shirts", "Closed one"}
    m = rows["Main"]
    assert m["Quota ID"] == main.id and m["Products"] == "Ticket"
    assert (m["Total quota"], m["Paid orders"], m["Pending orders"]) == (10, 2, 1)
    assert (m["Blocking vouchers"], m["Current user's carts"], m["Waiting list"]) == (3, 1, 1)
    assert m["Exited orders"] == 0
    assert m["Current availability"] == 10 - 2 - 1 - 3 - 1 and m["Available"] == "Yes"
    r = rows["Red shirts"]
    assert r["Products"] == "Shirt – Red" and r["Total quota"] == "Infinite"
    assert r["Paid orders"] == 1 and r["Current availability"] == "Infinite"
    c = rows["Closed one"]
    assert c["Current availability"] == 0 and c["Available"] == "No" and c["Closed"] == "Yes"
    # The same numbers the availability endpoint counts.
    async with clean_app.state.db.sessionmaker() as s:
        quotas = list(await s.scalars(select(Quota)))
        counted = await availability.count(s, quotas)
    for quota in quotas:
        row = rows[quota.name]
        n = counted[quota.id]
        assert row["Paid orders"] == n.paid_orders
        assert row["Blocking vouchers"] == n.blocking_vouchers
        expected = "Infinite" if n.available_number is None else n.available_number
        assert row["Current availability"] == expected


async def test_german_csv_with_dates(clean_app, background, factory, world):
    async with factory.sessionmaker() as s:
        await s.execute(
            update(Event)
            .where(Event.id == world.event.id)
            .values(has_subevents=True, timezone="America/New_York")
        )
        date = SubEvent(
            event_id=world.event.id, name={"en": "Day one", "de": "Tag eins"},
            date_from=dt.datetime(2030, 7, 1, 16, tzinfo=dt.UTC),
        )  # fmt: skip
        s.add(date)
        await s.commit()
    ticket = await h.ticket(factory, world.event, "Ticket")
    await factory.quota(world.event, None, items=[ticket], subevent=date, name="Day quota")
    job = await run_export(
        clean_app, world.admin, "quotalist", {"_format": "csv"}, organizer=world.org,
        event=world.event, locale="de",
    )  # fmt: skip
    rows = by_header(csv_rows(await result(background, job)))
    assert len(rows) == 1
    row = rows[0]
    assert row["Name des Kontingents"] == "Day quota"
    assert row["Gesamtkontingent"] == "Unbegrenzt" and row["Verfügbar"] == "Ja"
    assert row["Datum"] == "Tag eins"
    assert row["Beginn"] == "2030-07-01T12:00:00-04:00"
    assert row["Ende"] == ""


async def test_no_quotas_gives_headers_only(clean_app, background, factory, world):
    job = await run_export(
        clean_app, world.admin, "quotalist", {"_format": "csv"}, organizer=world.org,
        event=world.event,
    )  # fmt: skip
    rows = csv_rows(await result(background, job))
    assert rows[0][:2] == ["Quota ID", "Quota name"] and len(rows) == 1


async def test_needs_orders_permission_at_run_time(clean_app, background, factory, world):
    await build(factory, world)
    team = await factory.team(world.org, event_permissions=["event.items:write"])
    token = await factory.token(team)
    job = await run_export(
        clean_app, token, "quotalist", {"_format": "csv"}, organizer=world.org, event=world.event
    )
    assert job.status == "failed" and "permission" in job.message
    # Another organizer's token sees nothing of this event either.
    job = await run_export(
        clean_app, world.outsider, "quotalist", {"_format": "csv"}, organizer=world.org,
        event=world.event,
    )  # fmt: skip
    assert job.status == "failed" and job.result_key is None
