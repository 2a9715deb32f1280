"""The voucher list export (``voucherlist``): every voucher with every field, money with the
event currency's places."""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal

import openpyxl
from sqlalchemy import update

from admit.models import Event, Seat, SubEvent, Voucher
from tests.checkin import helpers as h
from tests.exports.jobrun import by_header, csv_rows, result, run_export, xlsx_rows
from tests.factories import Factory, World


async def build(factory: Factory, world: World, currency: str = "EUR") -> dict[str, Voucher]:
    event = world.event
    async with factory.sessionmaker() as s:
        await s.execute(
            update(Event)
            .where(Event.id == event.id)
            .values(currency=currency, timezone="Europe/Berlin", has_subevents=True)
        )
        await s.commit()
    ticket = await h.ticket(factory, event, "Ticket")
    shirt = await h.ticket(factory, event, "Shirt")
    red = await h.variation(factory, shirt, "Red")
    quota = await factory.quota(event, 10, items=[ticket], name="Main")
    date = await factory._add(
        SubEvent(
            event_id=event.id,
            name={"en": "Day one"},
            date_from=dt.datetime(2030, 7, 1, 16, tzinfo=dt.UTC),
        )
    )
    seat = await factory._add(Seat(event_id=event.id, seat_guid="B-2-7", row_name="2"))
    rows = {
        "set": Voucher(
            event_id=event.id, code="PRESS", price_mode="set", value=Decimal("12.50"),
            item_id=ticket.id, tag="press", comment="for journalists", max_usages=5,
            redeemed=2, budget=Decimal("100.00"), budget_used=Decimal("21.00"),
            valid_until=dt.datetime(2030, 6, 30, 22, tzinfo=dt.UTC),
        ),
        "percent": Voucher(
            event_id=event.id, code="TENOFF", price_mode="percent", value=Decimal("10.00"),
            quota_id=quota.id, block_quota=True, tag="promo",
        ),
        "none": Voucher(
            event_id=event.id, code="HIDDEN", subevent_id=date.id, allow_ignore_quota=True,
            show_hidden_items=False,
        ),
        "subtract": Voucher(
            event_id=event.id, code="REDSHIRT", price_mode="subtract", value=Decimal("1500"),
            item_id=shirt.id, variation_id=red.id, all_addons_included=True,
            all_bundles_included=True,
        ),
        "seat": Voucher(event_id=event.id, code="SEAT", item_id=ticket.id, seat_id=seat.id),
    }  # fmt: skip
    for key, voucher in rows.items():
        rows[key] = await factory._add(voucher)
    other = await factory._add(Voucher(event_id=world.other_event.id, code="THEIRS"))
    assert other
    return rows


async def _export(clean_app, world: World, form: dict, **kw):
    return await run_export(
        clean_app, kw.pop("token", world.admin), "voucherlist", form, organizer=world.org,
        event=world.event, **kw,
    )  # fmt: skip


async def test_every_voucher_field(clean_app, background, factory, world):
    vouchers = await build(factory, world)
    job = await _export(clean_app, world, {"_format": "xlsx"})
    data = await result(background, job)
    rows = {r["Voucher code"]: r for r in by_header(xlsx_rows(data))}
    assert set(rows) == {"PRESS", "TENOFF", "HIDDEN", "REDSHIRT", "SEAT"}  # not THEIRS
    press = rows["PRESS"]
    assert press["Voucher ID"] == vouchers["set"].id
    assert press["Product"] == "Ticket" and press["Variation"] is None
    assert press["Price mode"] == "Set product price to" and press["Voucher value"] == 12.5
    assert (press["Maximum usages"], press["Minimum usages"], press["Redeemed"]) == (5, 1, 2)
    assert press["Tag"] == "press" and press["Comment"] == "for journalists"
    assert press["Budget"] == 100 and press["Budget used"] == 21
    assert press["Valid until"] == dt.datetime(2030, 7, 1, 0, 0)  # Berlin midnight
    assert press["Reserve ticket from quota"] == "No"
    tenoff = rows["TENOFF"]
    assert tenoff["Quota"] == "Main" and tenoff["Reserve ticket from quota"] == "Yes"
    assert tenoff["Price mode"] == "Reduce product price by (%)" and tenoff["Voucher value"] == 10
    hidden = rows["HIDDEN"]
    assert hidden["Voucher value"] is None and hidden["Date"] == "Day one (2030-07-01 18:00)"
    assert hidden["Allow to bypass quota"] == "Yes" and hidden["Shows hidden products"] == "No"
    red = rows["REDSHIRT"]
    assert red["Product"] == "Shirt" and red["Variation"] == "Red"
    assert red["All add-ons included"] == "Yes" and red["All bundled products included"] == "Yes"
    assert rows["SEAT"]["Seat"] == "B-2-7"
    # Money cells carry the currency's places as their number format.
    sheet = openpyxl.load_workbook(io.BytesIO(data)).worksheets[0]
    header = [c.value for c in sheet[1]]
    value_cell = sheet.cell(row=2, column=header.index("Voucher value") + 1)
    assert value_cell.number_format == "0.00"


async def test_csv_places_of_the_currency_and_tag_filter(clean_app, background, factory, world):
    await build(factory, world, currency="JPY")
    job = await _export(clean_app, world, {"_format": "csv"}, locale="de")
    rows = {r["Gutscheincode"]: r for r in by_header(csv_rows(await result(background, job)))}
    assert rows["REDSHIRT"]["Gutscheinwert"] == "1500"  # yen have no minor unit
    assert rows["PRESS"]["Budget"] == "100" and rows["PRESS"]["Verbrauchtes Budget"] == "21"
    assert rows["TENOFF"]["Gutscheinwert"] == "10.00"  # a percentage, not money
    assert rows["PRESS"]["Gültig bis"] == "2030-07-01T00:00:00+02:00"
    assert rows["PRESS"]["Preiseffekt"] == "Produktpreis setzen auf"
    job = await _export(clean_app, world, {"_format": "csv", "tag": "promo"})
    rows = by_header(csv_rows(await result(background, job)))
    assert [r["Voucher code"] for r in rows] == ["TENOFF"]


async def test_needs_voucher_permission_at_run_time(clean_app, background, factory, world):
    await build(factory, world)
    team = await factory.team(world.org, event_permissions=["event.orders:read"])
    token = await factory.token(team)
    job = await _export(clean_app, world, {"_format": "csv"}, token=token)
    assert job.status == "failed" and "permission" in job.message
    team = await factory.team(world.org, event_permissions=["event.vouchers:read"])
    job = await _export(clean_app, world, {"_format": "csv"}, token=await factory.token(team))
    assert job.status == "finished"


async def test_csv_formula_cells_are_escaped(clean_app, background, factory, world):
    """Text a voucher's creator chose (comment, tag, code) cannot become a formula in the CSV
    a colleague opens; amounts (numbers) stay numbers."""
    vouchers = await build(factory, world)
    async with factory.sessionmaker() as s:
        await s.execute(
            update(Voucher)
            .where(Voucher.id == vouchers["set"].id)
            .values(comment='=HYPERLINK("http://evil.example","x")', tag="@SUM(A1)")
        )
        await s.execute(
            update(Voucher).where(Voucher.id == vouchers["none"].id).values(comment="\t-1+1")
        )
        await s.commit()
    job = await _export(clean_app, world, {"_format": "csv"})
    rows = {r["Voucher code"]: r for r in by_header(csv_rows(await result(background, job)))}
    assert rows["PRESS"]["Comment"] == '\'=HYPERLINK("http://evil.example","x")'
    assert rows["PRESS"]["Tag"] == "'@SUM(A1)"
    assert rows["HIDDEN"]["Comment"] == "'\t-1+1"
    assert rows["PRESS"]["Voucher value"] == "12.50"
