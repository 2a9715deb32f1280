"""The order list (``orderlist``), opened with openpyxl and csv and compared with the orders in
the database: codes, totals with the currency's places, answers as columns, German headers."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select, update

from admit.exports import reader
from admit.models import Event, Order, OrderFee, OrderPosition
from tests.exports.shop import (
    build_shop,
    csv_rows,
    export,
    records,
    xlsx_formats,
    xlsx_sheets,
)

BERLIN = ZoneInfo("Europe/Berlin")


async def db_orders(factory, event) -> list[Order]:
    async with factory.sessionmaker() as s:
        query = select(Order).where(Order.event_id == event.id).order_by(Order.id)
        return list(await s.scalars(query))


async def db_positions(factory, event) -> list[tuple[OrderPosition, str]]:
    async with factory.sessionmaker() as s:
        query = (
            select(OrderPosition, Order.code)
            .join(Order, Order.id == OrderPosition.order_id)
            .where(Order.event_id == event.id)
            .order_by(OrderPosition.order_id, OrderPosition.positionid)
        )
        return [tuple(row) for row in await s.execute(query)]


def local(moment: dt.datetime) -> dt.datetime:
    """A stored datetime as the naive Berlin wall time an XLSX cell holds (to the ms)."""
    value = moment.astimezone(BERLIN).replace(tzinfo=None)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def close_to(cell: dt.datetime, moment: dt.datetime) -> bool:
    return abs(cell - local(moment)) < dt.timedelta(milliseconds=2)


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of two rows: every per-chunk query runs several times, mid-cursor."""
    monkeypatch.setattr(reader, "CHUNK", 2)


async def test_xlsx_holds_orders_positions_and_fees_as_in_the_database(
    client, factory, world, background, small_chunks
):
    shop = await build_shop(client, factory, world)
    response = await export(client, world, "orderlist", {"_format": "xlsx"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith(
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    )
    disposition = response.headers["content-disposition"]
    assert "acme_summit_orderlist_" in disposition and ".xlsx" in disposition
    sheets = xlsx_sheets(response.content)
    assert list(sheets) == ["Orders", "Order positions", "Fees"]

    orders = records(sheets["Orders"])
    stored = await db_orders(factory, world.event)
    assert [o["Order code"] for o in orders] == [o.code for o in stored]
    assert [Decimal(str(o["Order total"])) for o in orders] == [o.total for o in stored]
    assert [o["Status"] for o in orders] == ["Paid", "Pending", "Canceled", "Paid"]
    pairs = zip(orders, stored, strict=True)
    assert all(close_to(row["Order date"], o.datetime) for row, o in pairs)
    ada = orders[0]
    assert ada["E-mail"] == "ada@example.org" and ada["Phone number"] == "+49301234567"
    assert ada["Invoice company"] == "Analytical Engines Ltd"
    assert ada["Invoice name"] == "Ada Lovelace" and ada["Invoice city"] == "Berlin"
    assert ada["VAT ID"] == "DE123456789" and ada["Invoice country"] == "DE"
    assert ada["Payment provider"] == "banktransfer" and ada["Positions"] == 2
    assert ada["Language"] == "de" and ada["Comment"] == "VIP" and ada["Test mode"] == "No"
    assert isinstance(ada["Payment date"], dt.datetime)
    assert orders[1]["Payment date"] is None  # pending
    # 19 % included in 23.00 is 3.67; the workshop and the fee carry none.
    assert Decimal(str(ada["Taxes"])) == Decimal("3.67")
    formats = xlsx_formats(response.content, "Orders", 2)
    headers = sheets["Orders"][0]
    assert formats[headers.index("Order total")] == "0.00"
    assert formats[headers.index("Order date")] == "yyyy-mm-dd hh:mm:ss"

    positions = records(sheets["Order positions"])
    stored_positions = await db_positions(factory, world.event)
    assert [(p["Order code"], p["Position ID"]) for p in positions] == [
        (code, p.positionid) for p, code in stored_positions
    ]
    assert [Decimal(str(p["Price"])) for p in positions] == [p.price for p, _ in stored_positions]
    assert [p["Ticket secret"] for p in positions] == [p.secret for p, _ in stored_positions]
    first = positions[0]
    assert first["Product"] == "Ticket" and first["Attendee name"] == "Ada Lovelace"
    assert first["Tax rate"] == 19 and Decimal(str(first["Tax value"])) == Decimal("3.67")
    assert first["Company"] == "Analytical Engines Ltd"
    # Every question is a column, in the questions' order, multiple choice one per option.
    assert sheets["Order positions"][0][-8:] == [
        "Age", "Diet", "Shirt", "Topics – Music", "Topics – Art", "Topics – Tech",
        "Newsletter", "Birthday",
    ]  # fmt: skip
    assert first["Age"] == 36 and first["Diet"] == "Vegan & <gluten-free>"
    assert first["Shirt"] == "M" and first["Newsletter"] == "Yes"
    assert (first["Topics – Music"], first["Topics – Art"], first["Topics – Tech"]) == (
        "Yes",
        None,
        "Yes",
    )
    assert first["Birthday"] == dt.datetime(1990, 4, 1)
    guest = positions[1]
    assert guest["Product"] == "Workshop" and guest["Variation"] == "V" and guest["Age"] is None
    grace = positions[2]
    assert grace["Newsletter"] == "No" and grace["Topics – Art"] == "Yes"
    assert grace["Status"] == "Pending" and positions[3]["Status"] == "Canceled"
    addon = positions[-1]
    assert addon["Add-on to position"] == 1 and positions[-2]["Add-on to position"] is None
    assert addon["Order e-mail"] == "edsger@example.org"
    assert close_to(addon["Order date"], stored[-1].datetime)

    fees = records(sheets["Fees"])
    assert fees == [
        {
            "Order code": shop.orders[0]["code"],
            "Status": "Paid",
            "Fee type": "Service fee",
            "Description": "Handling",
            "Value": 2.5,
            "Tax rate": 0,
            "Tax value": 0,
            "Canceled": "No",
        }
    ]


async def test_csv_tables_comma_and_semicolon(client, factory, world, background):
    await build_shop(client, factory, world)
    stored = await db_orders(factory, world.event)
    response = await export(client, world, "orderlist", {"_format": "positions:default"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert "orderlist-positions" in response.headers["content-disposition"]
    rows = records(csv_rows(response.content))
    stored_positions = await db_positions(factory, world.event)
    assert [r["Ticket secret"] for r in rows] == [p.secret for p, _ in stored_positions]
    assert [r["Price"] for r in rows] == [f"{p.price:.2f}" for p, _ in stored_positions]
    assert rows[0]["Price"] == "23.00" and rows[0]["Tax value"] == "3.67"
    assert rows[0]["Age"] == "36" and rows[0]["Topics – Tech"] == "Yes"
    assert rows[0]["Diet"] == "Vegan & <gluten-free>" and rows[0]["Birthday"] == "1990-04-01"
    moment = dt.datetime.fromisoformat(rows[0]["Order date"])
    assert moment.utcoffset() is not None and moment == stored[0].datetime

    response = await export(client, world, "orderlist", {"_format": "orders:semicolon"})
    rows = csv_rows(response.content, delimiter=";")
    assert rows[0][:3] == ["Order code", "Status", "E-mail"]
    assert [r[0] for r in rows[1:]] == [o.code for o in stored]
    assert [r[rows[0].index("Order total")] for r in rows[1:]] == [f"{o.total}" for o in stored]
    assert b";" in response.content.splitlines()[0]

    response = await export(client, world, "orderlist", {"_format": "fees:default"})
    rows = records(csv_rows(response.content))
    assert [(r["Fee type"], r["Value"]) for r in rows] == [("Service fee", "2.50")]


async def test_headers_and_texts_in_german(client, factory, world, background):
    await build_shop(client, factory, world)
    response = await export(client, world, "orderlist", {"_format": "xlsx", "locale": "de"})
    sheets = xlsx_sheets(response.content)
    assert list(sheets) == ["Bestellungen", "Bestellpositionen", "Gebühren"]
    orders = records(sheets["Bestellungen"])
    assert orders[0]["Bestellnummer"] and orders[0]["Status"] == "Bezahlt"
    assert orders[1]["Status"] == "Ausstehend" and orders[2]["Status"] == "Storniert"
    assert orders[0]["Testmodus"] == "Nein"
    header = sheets["Bestellpositionen"][0]
    assert header[:3] == ["Bestellnummer", "Positions-ID", "Status"]
    assert "Alter" in header and "Themen – Music" in header and "Ernährung" in header
    assert "Newsletter" in header  # no German text: the English one
    first = records(sheets["Bestellpositionen"])[0]
    assert first["Newsletter"] == "Ja" and first["Produkt"] == "Ticket"
    assert records(sheets["Gebühren"])[0]["Gebührenart"] == "Servicegebühr"

    # Without a locale in the body, the request's Accept-Language decides.
    response = await export(
        client,
        world,
        "orderlist",
        {"_format": "orders:default"},
        headers={"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"},
    )
    assert csv_rows(response.content)[0][0] == "Bestellnummer"
    response = await export(client, world, "orderlist", {"_format": "orders:default"})
    assert csv_rows(response.content)[0][0] == "Order code"


async def test_filters_and_grouped_choices(client, factory, world, background):
    shop = await build_shop(client, factory, world)
    codes = [o["code"] for o in shop.orders]
    response = await export(
        client, world, "orderlist", {"_format": "orders:default", "paid_only": True}
    )
    assert [r[0] for r in csv_rows(response.content)[1:]] == [codes[0], codes[3]]

    # Order dates: 2030-03-01 23:30 Berlin is still March 1st there (22:30 UTC).
    days = [
        dt.datetime(2030, 2, 28, 12, tzinfo=dt.UTC),
        dt.datetime(2030, 3, 1, 22, 30, tzinfo=dt.UTC),
        dt.datetime(2030, 3, 1, 23, 30, tzinfo=dt.UTC),  # March 2nd, 00:30 in Berlin
        dt.datetime(2030, 3, 5, 8, tzinfo=dt.UTC),
    ]
    async with factory.sessionmaker() as s:
        for code, when in zip(codes, days, strict=True):
            await s.execute(update(Order).where(Order.code == code).values(datetime=when))
        await s.commit()
    body = {"_format": "orders:default", "date_from": "2030-03-01", "date_to": "2030-03-01"}
    response = await export(client, world, "orderlist", body)
    assert [r[0] for r in csv_rows(response.content)[1:]] == [codes[1]]
    body = {"_format": "positions:default", "date_from": "2030-03-02"}
    response = await export(client, world, "orderlist", body)
    assert {r[0] for r in csv_rows(response.content)[1:]} == {codes[2], codes[3]}
    body = {"_format": "fees:default", "date_to": "2030-02-28"}
    response = await export(client, world, "orderlist", body)
    assert [r[0] for r in csv_rows(response.content)[1:]] == [codes[0]]

    body = {"_format": "positions:default", "group_multiple_choice": True}
    rows = records(csv_rows((await export(client, world, "orderlist", body)).content))
    assert "Topics" in rows[0] and "Topics – Music" not in rows[0]
    assert rows[0]["Topics"] == "Music, Tech" and rows[2]["Topics"] == "Art"


async def test_payment_amounts_per_provider(client, factory, world, background):
    shop = await build_shop(client, factory, world)
    body = {"_format": "orders:default", "include_payment_amounts": True}
    rows = records(csv_rows((await export(client, world, "orderlist", body)).content))
    assert [r["Paid via banktransfer"] for r in rows] == [shop.orders[0]["total"], "", "", ""]
    assert [r["Paid via stripe"] for r in rows] == ["", "", "", shop.orders[3]["total"]]
    plain = records(
        csv_rows((await export(client, world, "orderlist", {"_format": "orders:default"})).content)
    )
    assert not any(key.startswith("Paid via") for key in plain[0])


async def test_money_has_the_currency_places(client, factory, world, background):
    async with factory.sessionmaker() as s:
        await s.execute(update(Event).where(Event.id == world.event.id).values(currency="JPY"))
        await s.commit()
    await build_shop(client, factory, world)
    rows = records(
        csv_rows((await export(client, world, "orderlist", {"_format": "fees:default"})).content)
    )
    assert rows[0]["Value"] == "3"  # 2.50 with the yen's zero places, rounded half up
    response = await export(client, world, "orderlist", {"_format": "xlsx"})
    headers = xlsx_sheets(response.content)["Order positions"][0]
    formats = xlsx_formats(response.content, "Order positions", 2)
    assert formats[headers.index("Price")] == "0"


async def test_organizer_level_across_events_with_an_event_column(
    client, factory, world, background
):
    await build_shop(client, factory, world)
    second = await factory.event(world.org, "afterparty")
    await build_shop(client, factory, world, event=second)
    await factory.event(world.org, "empty")
    response = await export(client, world, "orderlist", {"_format": "xlsx"}, organizer_level=True)
    assert response.status_code == 200
    assert "acme_orderlist_" in response.headers["content-disposition"]
    sheets = xlsx_sheets(response.content)
    orders = records(sheets["Orders"])
    assert [o["Event"] for o in orders] == ["summit"] * 4 + ["afterparty"] * 4
    assert {o["Currency"] for o in orders} == {"EUR"}
    stored = await db_orders(factory, world.event) + await db_orders(factory, second)
    assert [o["Order code"] for o in orders] == [o.code for o in stored]
    positions = records(sheets["Order positions"])
    assert len(positions) == 12 and positions[0]["Event"] == "summit"
    # Questions of both events share a column per identifier.
    assert sheets["Order positions"][0].count("Age") == 1
    assert next(p["Age"] for p in positions if p["Event"] == "afterparty") == 36

    body = {"_format": "orders:default", "events": ["afterparty"]}
    response = await export(client, world, "orderlist", body, organizer_level=True)
    rows = records(csv_rows(response.content))
    assert {r["Event"] for r in rows} == {"afterparty"} and len(rows) == 4


async def test_organizer_level_covers_only_permitted_events(client, factory, world, background):
    await build_shop(client, factory, world)
    second = await factory.event(world.org, "afterparty")
    await build_shop(client, factory, world, event=second)
    team = await factory.team(
        world.org, all_events=False, events=[second], event_permissions=["event.orders:read"]
    )
    token = await factory.token(team)
    response = await export(
        client, world, "orderlist", {"_format": "orders:default"}, token=token,
        organizer_level=True,
    )  # fmt: skip
    rows = records(csv_rows(response.content))
    assert {r["Event"] for r in rows} == {"afterparty"} and len(rows) == 4


async def test_fees_of_canceled_orders_are_listed_as_canceled(client, factory, world, background):
    shop = await build_shop(client, factory, world)
    async with factory.sessionmaker() as s:
        order_id = await s.scalar(select(Order.id).where(Order.code == shop.orders[0]["code"]))
        await s.execute(update(OrderFee).where(OrderFee.order_id == order_id).values(canceled=True))
        await s.commit()
    rows = records(
        csv_rows((await export(client, world, "orderlist", {"_format": "fees:default"})).content)
    )
    assert rows[0]["Canceled"] == "Yes"
    orders = records(
        csv_rows((await export(client, world, "orderlist", {"_format": "orders:default"})).content)
    )
    assert orders[0]["Taxes"] == "3.67"  # a canceled fee adds no tax either way


async def test_an_add_on_numbered_before_its_parent(client, factory, world, background):
    shop = await build_shop(client, factory, world)
    code = shop.orders[3]["code"]
    parent_id = shop.orders[3]["positions"][0]["id"]
    async with factory.sessionmaker() as s:
        await s.execute(
            update(OrderPosition).where(OrderPosition.id == parent_id).values(positionid=3)
        )
        await s.commit()
    for organizer_level in (False, True):
        body = {"_format": "positions:default"}
        response = await export(client, world, "orderlist", body, organizer_level=organizer_level)
        rows = [r for r in records(csv_rows(response.content)) if r["Order code"] == code]
        assert [(r["Position ID"], r["Add-on to position"]) for r in rows] == [
            ("2", "3"),
            ("3", ""),
        ]
