"""Organizer-level gift card exports: the cards (``giftcardlist``) and their transactions
(``giftcardtransactionlist``), values with each currency's places."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from admit.models import GiftCard, GiftCardTransaction
from tests.checkin import helpers as h
from tests.exports.jobrun import (
    by_header,
    csv_rows,
    fetch_download,
    result,
    run_export,
    xlsx_rows,
)
from tests.factories import Factory, World, assert_field_errors, auth


def at(month: int, day: int, hour: int = 10) -> dt.datetime:
    return dt.datetime(2030, month, day, hour, tzinfo=dt.UTC)


async def build(factory: Factory, world: World) -> dict[str, object]:
    ticket = await h.ticket(factory, world.event, "Gift card")
    order, (position,) = await h.order(factory, world.event, ticket)
    cards = {
        "eur": GiftCard(
            issuer_id=world.org.id, secret="GIFT-EUR", currency="EUR", value=Decimal("30.00"),
            issuance=at(1, 10), expires=at(12, 31, 22), conditions="Not for drinks",
            owner_ticket_id=position.id, issued_in_id=position.id,
        ),
        "kwd": GiftCard(
            issuer_id=world.org.id, secret="GIFT-KWD", currency="KWD", value=Decimal("12.50"),
            issuance=at(3, 1),
        ),
        "jpy": GiftCard(
            issuer_id=world.org.id, secret="GIFT-JPY", currency="JPY", value=Decimal("1000"),
            issuance=at(3, 5), testmode=True,
        ),
        "theirs": GiftCard(
            issuer_id=world.other.id, secret="THEIRS", currency="EUR", value=Decimal("5.00"),
        ),
    }  # fmt: skip
    for key, card in cards.items():
        cards[key] = await factory._add(card)
    moves = [
        ("eur", at(1, 10), "50.00", order.id, None, None),
        ("eur", at(2, 1, 12), "-20.00", None, world.other.id, "redeemed at the bar"),
        ("kwd", at(3, 1), "12.50", None, None, None),
        ("jpy", at(3, 5), "1000", None, None, None),
        ("theirs", at(3, 5), "5.00", None, None, None),
    ]
    for key, when, value, order_id, acceptor, text in moves:
        await factory._add(
            GiftCardTransaction(
                card_id=cards[key].id,
                datetime=when,
                value=Decimal(value),
                order_id=order_id,
                acceptor_id=acceptor,
                text=text,
            )
        )
    return {"order": order, "position": position, **cards}


async def _export(clean_app, world: World, identifier: str, form: dict, **kw):
    return await run_export(
        clean_app, kw.pop("token", world.admin), identifier, form, organizer=world.org, **kw
    )


async def test_gift_card_list(clean_app, background, factory, world):
    scene = await build(factory, world)
    job = await _export(clean_app, world, "giftcardlist", {"_format": "xlsx"})
    assert job.result_name.startswith("acme_giftcardlist_")
    rows = by_header(xlsx_rows(await result(background, job)))
    assert [r["Gift card code"] for r in rows] == ["GIFT-EUR", "GIFT-KWD", "GIFT-JPY"]
    eur, kwd, jpy = rows
    assert eur["Current value"] == 30 and eur["Currency"] == "EUR"
    assert eur["Creation date"] == dt.datetime(2030, 1, 10, 10, 0)  # UTC by default
    assert eur["Expiry date"] == dt.datetime(2030, 12, 31, 22, 0)
    assert eur["Special terms and conditions"] == "Not for drinks"
    code = scene["order"].code
    assert eur["Created in order"] == code and eur["Event"] == "summit"
    assert eur["Owned by ticket"] == f"{code}-1"
    assert eur["Test mode"] == "No" and jpy["Test mode"] == "Yes"
    assert kwd["Current value"] == 12.5 and jpy["Current value"] == 1000
    assert eur["Gift card ID"] == scene["eur"].id


async def test_gift_card_csv_places_zone_and_filters(clean_app, background, factory, world):
    await build(factory, world)
    job = await _export(
        clean_app, world, "giftcardlist", {"_format": "csv", "timezone": "Asia/Tokyo"}
    )
    rows = {r["Gift card code"]: r for r in by_header(csv_rows(await result(background, job)))}
    assert rows["GIFT-EUR"]["Current value"] == "30.00"
    assert rows["GIFT-KWD"]["Current value"] == "12.500"  # three places for dinar
    assert rows["GIFT-JPY"]["Current value"] == "1000"  # none for yen
    assert rows["GIFT-EUR"]["Creation date"] == "2030-01-10T19:00:00+09:00"
    job = await _export(clean_app, world, "giftcardlist", {"_format": "csv", "testmode": "no"})
    rows = by_header(csv_rows(await result(background, job)))
    assert [r["Gift card code"] for r in rows] == ["GIFT-EUR", "GIFT-KWD"]
    # The value as it was at the end of 20 January: only the euro card existed, still full.
    job = await _export(
        clean_app, world, "giftcardlist", {"_format": "csv", "date": "2030-01-20"}, locale="de"
    )
    rows = by_header(csv_rows(await result(background, job)))
    assert [(r["Geschenkgutschein-Code"], r["Aktueller Wert"]) for r in rows] == [
        ("GIFT-EUR", "50.00")
    ]
    job = await _export(
        clean_app, world, "giftcardlist", {"_format": "csv", "date": "2030-02-01T12:00"}
    )
    rows = by_header(csv_rows(await result(background, job)))
    assert [r["Current value"] for r in rows] == ["30.00"]  # the redemption at that moment counts


async def test_transaction_list(clean_app, background, factory, world):
    scene = await build(factory, world)
    job = await _export(clean_app, world, "giftcardtransactionlist", {"_format": "xlsx"})
    rows = by_header(xlsx_rows(await result(background, job)))
    assert [r["Gift card code"] for r in rows] == ["GIFT-EUR", "GIFT-EUR", "GIFT-KWD", "GIFT-JPY"]
    issue, redeem, kwd, jpy = rows
    assert issue["Amount"] == 50 and issue["Order code"] == scene["order"].code
    assert issue["Event"] == "summit" and issue["Date"] == dt.datetime(2030, 1, 10, 10)
    assert redeem["Amount"] == -20 and redeem["Accepted by"] == "rival"
    assert redeem["Text"] == "redeemed at the bar" and redeem["Order code"] is None
    assert jpy["Test mode"] == "Yes" and jpy["Currency"] == "JPY"
    assert kwd["Gift card ID"] == scene["kwd"].id


async def test_transaction_date_range_in_german(clean_app, background, factory, world):
    await build(factory, world)
    job = await _export(
        clean_app, world, "giftcardtransactionlist",
        {"_format": "semicolon", "date_from": "2030-02-01", "date_to": "2030-03-01",
         "timezone": "Europe/Berlin"},
        locale="de",
    )  # fmt: skip
    raw = csv_rows(await result(background, job), ";")
    assert raw[0][:4] == ["Datum", "Geschenkgutschein-Code", "Testmodus", "Betrag"]
    rows = by_header(raw)
    assert [(r["Datum"], r["Betrag"]) for r in rows] == [
        ("2030-02-01T13:00:00+01:00", "-20.00"),
        ("2030-03-01T11:00:00+01:00", "12.500"),
    ]
    job = await _export(
        clean_app, world, "giftcardtransactionlist",
        {"_format": "csv", "date_from": "2030-03-02", "date_to": "2030-03-01"},
    )  # fmt: skip
    assert job.status == "failed" and "date range" in job.message


async def test_needs_gift_card_permission_at_run_time(clean_app, background, factory, world):
    await build(factory, world)
    team = await factory.team(world.org, event_permissions=["event.orders:read"])
    token = await factory.token(team)
    for identifier in ("giftcardlist", "giftcardtransactionlist"):
        job = await _export(clean_app, world, identifier, {"_format": "csv"}, token=token)
        assert job.status == "failed" and "permission" in job.message
    # An organizer without events: the permission is still checked.
    empty = await factory.organizer("lonely")
    token = await factory.token(await factory.team(empty, event_permissions=["event.orders:read"]))
    job = await run_export(clean_app, token, "giftcardlist", {"_format": "csv"}, organizer=empty)
    assert job.status == "failed" and "permission" in job.message
    team = await factory.team(world.org, organizer_permissions=["organizer.giftcards:read"])
    job = await _export(
        clean_app, world, "giftcardlist", {"_format": "csv"}, token=await factory.token(team)
    )
    assert job.status == "finished"


async def test_bad_time_zone_fails(clean_app, background, factory, world):
    job = await _export(
        clean_app, world, "giftcardlist", {"_format": "csv", "timezone": "Mars/Olympus"}
    )
    assert job.status == "failed" and "time zone" in job.message


async def test_organizer_level_through_the_api(client, background, factory, world):
    await build(factory, world)
    base = f"/api/v1/organizers/{world.org.slug}/exporters"
    listing = await client.get(f"{base}/", headers=auth(world.admin))
    found = {d["identifier"] for d in listing.json()["results"]}
    assert {"giftcardlist", "giftcardtransactionlist"} <= found
    # Without the gift card permission the exporters are neither listed nor runnable.
    listing = await client.get(f"{base}/", headers=auth(world.nobody))
    assert "giftcardlist" not in {d["identifier"] for d in listing.json()["results"]}
    response = await client.post(
        f"{base}/giftcardlist/run/", json={"_format": "csv"}, headers=auth(world.nobody)
    )
    assert response.status_code == 403
    response = await client.post(
        f"{base}/giftcardlist/run/",
        json={"_format": "csv", "timezone": "Mars/Olympus"},
        headers=auth(world.admin),
    )
    assert_field_errors(response, "timezone")
    response = await client.post(
        f"{base}/giftcardtransactionlist/run/",
        json={"_format": "csv", "date_from": "yesterday"},
        headers=auth(world.admin),
    )
    assert_field_errors(response, "date_from")
    response = await client.post(
        f"{base}/giftcardlist/run/", json={"_format": "csv"}, headers=auth(world.admin)
    )
    assert response.status_code == 202
    done = await fetch_download(client, response.json()["download"], auth(world.admin))
    assert done.status_code == 200 and done.headers["content-type"].startswith("text/csv")
    rows = by_header(csv_rows(done.content))
    assert [r["Current value"] for r in rows] == ["30.00", "12.500", "1000"]
