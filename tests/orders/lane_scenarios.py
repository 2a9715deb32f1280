"""Order scenarios run through both paths of order creation (``test_lane.py``). Each builds its
own catalog in the run's event (names, not ids, tie the two runs together) and posts orders."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

from sqlalchemy import insert

from admit.models import (
    AutoCheckinRule,
    CheckinList,
    Customer,
    Discount,
    Event,
    Item,
    ItemBundle,
    ItemCategory,
    ItemVariation,
    MembershipType,
    Question,
    QuestionOption,
    SubEvent,
    SubEventItem,
    TaxRule,
    Voucher,
    question_items,
)
from tests.factories import auth, unique
from tests.orders.lane_compare import Run
from tests.seating import helpers as seating

Scenario = Callable[[Run], Awaitable[None]]


async def item(
    run: Run, name: str, price: str = "10.00", quota: int | None = 100, **kw: Any
) -> Item:
    obj = await run.factory._add(
        Item(event_id=run.event.id, name={"en": name}, default_price=Decimal(price), **kw)
    )
    if quota is not False:
        await run.factory.quota(run.event, quota, items=[obj], name=f"Q {name}")  # type: ignore[list-item]
    return obj  # type: ignore[return-value]


async def variation(run: Run, parent: Item, value: str, price: str | None = None) -> ItemVariation:
    return await run.factory._add(  # type: ignore[return-value]
        ItemVariation(
            item_id=parent.id,
            value={"en": value},
            default_price=Decimal(price) if price else None,
        )
    )


async def question(
    run: Run, ident: str, kind: str, items: list[Item], options: tuple[str, ...] = ()
) -> Question:
    async with run.factory.sessionmaker() as s:
        q = Question(event_id=run.event.id, question={"en": ident}, type=kind, identifier=ident)
        s.add(q)
        await s.flush()
        for n, text in enumerate(options):
            s.add(
                QuestionOption(question_id=q.id, identifier=text, answer={"en": text}, position=n)
            )
        for i in items:
            await s.execute(insert(question_items).values(question_id=q.id, item_id=i.id))
        await s.commit()
        await s.refresh(q, ["options"])
        return q


async def update_event(run: Run, **values: Any) -> None:
    async with run.factory.sessionmaker() as s:
        event = await s.get(Event, run.event.id)
        assert event is not None
        for key, value in values.items():
            setattr(event, key, value)
            setattr(run.event, key, value)
        await s.commit()


# -- the scenarios ----------------------------------------------------------------------------


async def plain_until_sold_out(run: Run) -> None:
    ticket = await item(run, "Ticket", quota=2)
    for _ in range(3):
        await run.post({"email": "fan@example.org", "positions": [{"item": ticket.id}]})


async def addon_and_answers(run: Run) -> None:
    rule = await run.factory._add(
        TaxRule(event_id=run.event.id, name={"en": "VAT"}, rate=Decimal("19.00"))
    )
    ticket = await item(run, "Ticket", "120.00", tax_rule_id=rule.id, admission=True)  # type: ignore[attr-defined]
    shirt = await item(run, "Shirt", "25.00", quota=False, generate_tickets=False)
    small = await variation(run, shirt, "S")
    large = await variation(run, shirt, "L", "27.50")
    await run.factory.quota(run.event, 50, items=[shirt], variations=[small, large], name="Shirts")
    name = await question(run, "NAME", "S", [ticket])
    diet = await question(run, "DIET", "C", [ticket], ("NONE", "VEGAN"))
    extras = await question(run, "EXTRAS", "M", [ticket], ("PARKING", "LUNCH", "DINNER"))
    when = await question(run, "ARRIVAL", "W", [ticket])
    opts = {o.identifier: o.id for q in (diet, extras) for o in q.options}
    await run.post(
        {
            "email": "ada@example.org",
            "phone": "+4930123456",
            "locale": "de",
            "status": "p",
            "payment_provider": "banktransfer",
            "payment_date": "2030-01-02T03:04:05+02:00",
            "comment": "box office",
            "checkin_attention": True,
            "checkin_text": "VIP",
            "sales_channel": "box_office",
            "testmode": False,
            "expires": "2031-01-01T10:00:00+01:00",
            "invoice_address": {"company": "ACME", "is_business": True, "country": "DE"},
            "api_meta": {"crm": 7, "tags": ["a", "b"]},
            "custom_followup_at": "2030-02-01",
            "fees": [{"fee_type": "service", "value": "2.50", "tax_rule": rule.id}],  # type: ignore[attr-defined]
            "positions": [
                {
                    "positionid": 1,
                    "item": ticket.id,
                    "attendee_name_parts": {"given_name": "Ada", "family_name": "Lovelace"},
                    "attendee_email": "ada@example.org",
                    "company": "Engines",
                    "country": "GB",
                    "answers": [
                        {"question": name.id, "answer": "  Ada  "},
                        {"question": diet.id, "options": [opts["VEGAN"]]},
                        {"question": extras.id, "options": [opts["DINNER"], opts["PARKING"]]},
                        {"question": when.id, "answer": "2030-05-01T10:00:00+02:00"},
                    ],
                },
                {"positionid": 2, "item": shirt.id, "variation": small.id, "addon_to": 1},
                {"positionid": 3, "item": ticket.id, "attendee_name": "Grace Hopper"},
                {"positionid": 4, "item": shirt.id, "variation": large.id, "addon_to": 3},
            ],
        }
    )


async def several_products_and_discounts(run: Run) -> None:
    net = await run.factory._add(
        TaxRule(
            event_id=run.event.id,
            name={"en": "Net"},
            rate=Decimal("7.00"),
            price_includes_tax=False,
        )
    )
    day = await item(run, "Day", "40.00", quota=False, tax_rule_id=net.id)  # type: ignore[attr-defined]
    week = await item(run, "Week", "150.00", quota=False)
    await run.factory.quota(run.event, 3, items=[day], name="Days")
    await run.factory.quota(run.event, 4, items=[day, week], name="Hall")
    await run.factory._add(
        Discount(
            event_id=run.event.id,
            internal_name="Pairs",
            condition_min_count=2,
            benefit_discount_matching_percent=Decimal(50),
        )
    )
    await run.post({"positions": [{"item": day.id}, {"item": day.id}]})
    await run.post({"positions": [{"item": week.id, "price": "99.99"}, {"item": day.id}]})
    await run.post({"positions": [{"item": week.id}, {"item": day.id}]})  # Hall sold out
    await run.post({"positions": [{"item": week.id, "price": "0.00"}], "status": "n"})
    await run.post({"positions": [{"item": week.id}], "force": True})  # past the quota


async def quotas_of_every_kind(run: Run) -> None:
    closed = await item(run, "Closed", quota=False)
    await run.factory.quota(run.event, 10, items=[closed], name="Shut", closed=True)
    free = await item(run, "Free", quota=None)
    nowhere = await item(run, "Nowhere", quota=False)
    shirt = await item(run, "Shirt", quota=False)
    red = await variation(run, shirt, "Red")
    blue = await variation(run, shirt, "Blue")
    await run.factory.quota(run.event, 1, items=[shirt], variations=[red], name="Red shirts")
    await run.post({"positions": [{"item": closed.id}]})
    await run.post({"positions": [{"item": free.id}, {"item": free.id}]})
    await run.post({"positions": [{"item": free.id}, {"item": nowhere.id}]})
    await run.post({"positions": [{"item": shirt.id, "variation": blue.id}]})
    await run.post({"positions": [{"item": shirt.id, "variation": red.id}]})
    await run.post({"positions": [{"item": shirt.id, "variation": red.id}]})
    await run.post({"positions": [{"item": nowhere.id}], "force": True})


async def special_quota(run: Run) -> None:
    ticket = await item(run, "Closing", quota=False)
    await run.factory.quota(run.event, 1, items=[ticket], name="C", close_when_sold_out=True)
    await run.post({"positions": [{"item": ticket.id}]})
    await run.post({"positions": [{"item": ticket.id}]})


async def vouchers(run: Run) -> None:
    ticket = await item(run, "Ticket", "20.00")
    code = "SAVE5"  # vouchers are the event's: both runs may use one code
    await run.factory._add(
        Voucher(
            event_id=run.event.id,
            code=code,
            max_usages=2,
            price_mode="subtract",
            value=Decimal("5.00"),
        )
    )
    hidden = await item(run, "Hidden", require_voucher=True)
    await run.post({"positions": [{"item": ticket.id, "voucher": code}] * 2})
    await run.post({"positions": [{"item": ticket.id, "voucher": code}]})  # used up
    await run.post({"positions": [{"item": hidden.id}]})  # needs a voucher


async def blocking_voucher(run: Run) -> None:
    """A voucher holding 2 of a quota of 3 (for the product, and one naming the quota):
    one order fits, the next finds the quota held."""
    ticket = await item(run, "Held", quota=False)
    quota = await run.factory.quota(run.event, 3, items=[ticket], name="Held quota")
    for code, target in (("HOLD1", {"item_id": ticket.id}), ("HOLD2", {"quota_id": quota.id})):
        await run.factory._add(
            Voucher(
                event_id=run.event.id,
                code=code,
                max_usages=1,
                block_quota=True,
                **target,
            )
        )
    await run.post({"positions": [{"item": ticket.id}]})
    await run.post({"positions": [{"item": ticket.id}]})  # the rest is held


async def seats(run: Run) -> None:
    ticket = await seating.ticket(run.factory, run.event)
    await seating.seated_event(run.factory, run.event, {"Stalls": ticket.id, "Balcony": None})
    await run.post({"positions": [{"item": ticket.id, "seat": "1-1"}]})
    await run.post({"positions": [{"item": ticket.id, "seat": "1-1"}]})  # taken
    await run.post({"positions": [{"item": ticket.id}]})  # a seat is required


async def bundles(run: Run) -> None:
    drink = await item(run, "Drink", "3.00")
    combo = await item(run, "Combo", "50.00")
    await run.factory._add(ItemBundle(base_item_id=combo.id, bundled_item_id=drink.id, count=2))
    await run.post({"positions": [{"item": combo.id}, {"item": drink.id, "addon_to": 1}]})


async def invalid_input(run: Run) -> None:
    ticket = await item(run, "Ticket")
    shirt = await item(run, "Shirt")
    await variation(run, shirt, "S")
    text = await question(run, "TEXT", "N", [ticket])
    cases: list[dict[str, Any]] = [
        {"positions": []},
        {"positions": [{"item": 999_999_999}]},
        {"positions": [{"item": shirt.id}]},
        {"positions": [{"item": ticket.id, "variation": 999_999_999}]},
        {"positions": [{"item": ticket.id, "subevent": 5}]},
        {"positions": [{"item": ticket.id, "addon_to": 1}]},
        {"positions": [{"item": ticket.id, "positionid": 2}]},
        {"positions": [{"item": ticket.id, "answers": [{"question": text.id, "answer": "x"}]}]},
        {"positions": [{"item": shirt.id, "answers": [{"question": text.id, "answer": "1"}]}]},
        {"positions": [{"item": ticket.id}], "email": "not an address"},
        {"positions": [{"item": ticket.id}], "status": "p", "payment_provider": None},
        {
            "positions": [{"item": ticket.id}],
            "fees": [{"fee_type": "other", "value": "1", "tax_rule": 999_999}],
        },
        {"positions": [{"item": ticket.id}], "tax_rounding_mode": "sum_by_net"},
        {"positions": [{"item": ticket.id}], "sales_channel": "pigeon"},
        {"positions": [{"item": ticket.id}], "customer": "NOBODY"},
        {"positions": [{"item": ticket.id, "price": "-1"}]},
        {"positions": [{"item": ticket.id}], "unknown": 1},
        {
            "positions": [
                {"item": ticket.id, "secret": "s" * 10},
                {"item": ticket.id, "secret": "s" * 10},
            ]
        },
    ]
    for body in cases:
        await run.post(body)


async def taken_secret(run: Run) -> None:
    ticket = await item(run, "Ticket")
    secret = unique("mine")  # both runs share the organizer, not the event
    await run.post({"positions": [{"item": ticket.id, "secret": secret}]})
    await run.post({"positions": [{"item": ticket.id, "secret": secret}]})


async def dated_event(run: Run) -> None:
    await update_event(run, has_subevents=True)
    ticket = await item(run, "Ticket", "10.00", quota=False)
    date = await run.factory._add(
        SubEvent(event_id=run.event.id, name={"en": "Day 1"}, date_from=run.event.date_from)
    )
    other = await run.factory._add(
        SubEvent(event_id=run.event.id, name={"en": "Day 2"}, date_from=run.event.date_from)
    )
    await run.factory._add(
        SubEventItem(subevent_id=date.id, item_id=ticket.id, price=Decimal("7.50"))
    )  # type: ignore[attr-defined]
    await run.factory.quota(run.event, 1, items=[ticket], subevent=date, name="Day 1")  # type: ignore[arg-type]
    await run.post({"positions": [{"item": ticket.id, "subevent": date.id}]})  # type: ignore[attr-defined]
    await run.post({"positions": [{"item": ticket.id, "subevent": date.id}]})  # type: ignore[attr-defined]
    await run.post({"positions": [{"item": ticket.id, "subevent": other.id}]})  # type: ignore[attr-defined]
    await run.post({"positions": [{"item": ticket.id}]})


async def customers_and_states(run: Run) -> None:
    ticket = await item(run, "Ticket", "12.00")
    free = await item(run, "Free", "0.00")
    ident = unique("C")[:32]
    await run.factory._add(Customer(organizer_id=run.world.org.id, identifier=ident))
    await run.post({"positions": [{"item": ticket.id}], "customer": ident})
    await run.post({"positions": [{"item": free.id}]})
    await run.post({"positions": [{"item": free.id}], "require_approval": True})
    await run.post({"positions": [{"item": ticket.id}], "valid_if_pending": True})
    await update_event(run, testmode=True)
    await run.post({"positions": [{"item": ticket.id}]})


async def validity(run: Run) -> None:
    fixed = await item(
        run,
        "Fixed",
        validity_mode="fixed",
        validity_fixed_from=dt.datetime(2030, 1, 1, tzinfo=dt.UTC),
        validity_fixed_until=dt.datetime(2030, 12, 31, tzinfo=dt.UTC),
    )
    dynamic = await item(run, "Dynamic", validity_mode="dynamic", validity_dynamic_duration_days=2)
    await run.post({"positions": [{"item": fixed.id}, {"item": dynamic.id}]})
    await run.post({"positions": [{"item": fixed.id, "valid_from": "2030-03-01T00:00:00+01:00"}]})


async def hooks_with_work(run: Run) -> None:
    card = await item(run, "Gift card", "25.00", issue_giftcard=True)
    await run.post({"positions": [{"item": card.id}], "status": "p", "payment_provider": "cash"})
    mtype = await run.factory._add(
        MembershipType(organizer_id=run.world.org.id, name={"en": unique("Pass")})
    )
    season = await item(run, "Season", grant_membership_type_id=mtype.id)  # type: ignore[attr-defined]
    ident = unique("M")[:32]
    await run.factory._add(Customer(organizer_id=run.world.org.id, identifier=ident))
    await run.post(
        {
            "positions": [{"item": season.id}],
            "status": "p",
            "payment_provider": "cash",
            "customer": ident,
        }
    )
    entry = await run.factory._add(CheckinList(event_id=run.event.id, name="Entrance"))
    await update_event(run, plugins=["autocheckin"])
    ticket = await item(run, "Ticket")
    await run.post({"positions": [{"item": ticket.id}]})  # plugin on, no rule: nothing to do
    await run.factory._add(
        AutoCheckinRule(event_id=run.event.id, list_id=entry.id, mode="placed")  # type: ignore[attr-defined]
    )
    await run.post({"positions": [{"item": ticket.id}]})


async def catalog_changes(run: Run) -> None:
    ticket = await item(run, "Ticket", "10.00")
    await run.post({"positions": [{"item": ticket.id}]})
    response = await run.client.patch(
        run.url(f"items/{ticket.id}/"),
        json={"default_price": "11.00"},
        headers=auth(run.world.admin),
    )
    assert response.status_code == 200, response.text
    await run.post({"positions": [{"item": ticket.id}]})
    await run.post({"positions": [{"item": ticket.id}]})
    await run.factory._add(
        Discount(
            event_id=run.event.id,
            internal_name="All",
            condition_min_count=1,
            benefit_discount_matching_percent=Decimal(10),
        )
    )
    await run.post({"positions": [{"item": ticket.id}]})
    await run.post({"positions": [{"item": ticket.id}]})


async def categories_unused(run: Run) -> None:
    """Add-on categories are not checked by the API (as in the reference): both paths agree."""
    merch = await run.factory._add(
        ItemCategory(event_id=run.event.id, name={"en": "Merch"}, is_addon=True)
    )
    mug = await item(run, "Mug", "8.00", category_id=merch.id)  # type: ignore[attr-defined]
    await run.post({"positions": [{"item": mug.id}]})


async def taxes_by_invoice_address(run: Run) -> None:
    """Custom rules and reverse charge by invoice address: both paths price and refuse alike
    (a blocked sale never reaches the lane's database call) and neither forces approval."""
    rule = await run.factory._add(
        TaxRule(
            event_id=run.event.id,
            name={"en": "VAT"},
            rate=Decimal("19.00"),
            code="S/standard",
            home_country="DE",
            custom_rules=[
                {"country": "EU", "address_type": "business_vat_id", "action": "reverse"},
                {"country": "US", "address_type": "", "action": "block"},
                {"country": "GB", "address_type": "business", "action": "require_approval"},
                {"country": "CH", "address_type": "", "action": "vat", "rate": "8.10"},
            ],
        )
    )
    kept = await run.factory._add(
        TaxRule(
            event_id=run.event.id,
            name={"en": "Kept"},
            rate=Decimal("7.00"),
            price_includes_tax=False,
            eu_reverse_charge=True,
            keep_gross_if_rate_changes=True,
            home_country="DE",
        )
    )
    ticket = await item(run, "Ticket", "119.00", tax_rule_id=rule.id)  # type: ignore[attr-defined]
    book = await item(run, "Book", "20.00", tax_rule_id=kept.id)  # type: ignore[attr-defined]
    fees = [
        {"fee_type": "service", "value": "2.38", "tax_rule": rule.id},  # type: ignore[attr-defined]
        {"fee_type": "shipping", "value": "4.28", "tax_rule": kept.id},  # type: ignore[attr-defined]
    ]
    addresses: list[dict[str, Any] | None] = [
        None,
        {"country": "DE", "name": "Max"},
        {"country": "FR", "is_business": True, "company": "SA", "vat_id": "FR1",
         "vat_id_validated": True},
        {"country": "FR", "is_business": True, "company": "SA", "vat_id": "FR1"},
        {"country": "US", "name": "Sam"},
        {"country": "GB", "is_business": True, "company": "Ltd"},
        {"country": "CH", "name": "Heidi"},
    ]  # fmt: skip
    answers = [
        await run.post(
            {
                "invoice_address": address,
                "fees": fees,
                "positions": [
                    {"item": ticket.id},
                    {"item": book.id},
                    {"item": ticket.id, "price": "50.00"},
                ],
            }
        )
        for address in addresses
    ]
    reverse = answers[2]
    assert [(p["price"], p["tax_code"]) for p in reverse["positions"]] == [
        ("100.00", "AE"),
        ("21.40", "AE"),  # keep_gross: 20.00 net + 7 %
        ("50.00", "AE"),
    ]
    assert [f["tax_value"] for f in reverse["fees"]] == ["0.00", "0.00"]
    assert "item" in answers[4]["positions"][0]  # blocked
    assert answers[5]["require_approval"] is False  # the API's creator decides, as the reference
    assert answers[6]["positions"][0]["price"] == "108.10"  # the net stays: 100.00 + 8.10 %
    await run.post({"invoice_address": addresses[4], "positions": [{"item": book.id}]})


SCENARIOS: dict[str, tuple[Scenario, set[str]]] = {
    "plain": (plain_until_sold_out, {"done", "sold_out"}),
    "addon_answers": (addon_and_answers, {"done"}),
    "several": (several_products_and_discounts, {"done", "sold_out"}),
    "quotas": (quotas_of_every_kind, {"done", "sold_out", "no_quota"}),
    "special_quota": (special_quota, {"declined"}),
    "vouchers": (vouchers, set()),
    "blocking_voucher": (blocking_voucher, {"done", "sold_out"}),
    "seats": (seats, set()),
    "bundles": (bundles, {"done"}),
    "invalid": (invalid_input, {"declined"}),
    "taken_secret": (taken_secret, {"done", "declined"}),
    "dated": (dated_event, {"done", "sold_out", "no_quota"}),
    "customers": (customers_and_states, {"done", "stale"}),
    "validity": (validity, {"done"}),
    "hooks": (hooks_with_work, {"done", "declined"}),
    "catalog_changes": (catalog_changes, {"done", "stale"}),
    "categories": (categories_unused, {"done"}),
    "taxes": (taxes_by_invoice_address, {"done"}),
}
