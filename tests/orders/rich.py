"""Orders that fill every field the order and position renderers show, for the parity tests
of the rows renderers (``test_row_parity.py`` here and in ``tests/checkin``): answers of every
kind with chosen options, a seat, print logs, check-ins on two lists (and a failed one),
fees and a position canceled, payments and refunds with gift card details, a customer, and
an order in every state."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import select, update

from admit.models import (
    Customer,
    Device,
    Order,
    OrderFee,
    OrderPayment,
    OrderPosition,
    OrderRefund,
    PrintLog,
    QuestionOption,
    Seat,
)
from admit.models.checkin import Checkin
from tests.factories import Factory, World, auth
from tests.orders import helpers as oh

WHEN = dt.datetime(2031, 5, 6, 7, 8, 9, 123456, tzinfo=dt.UTC)


async def post(client: httpx.AsyncClient, h: dict[str, str], url: str, body: Any) -> Any:
    response = await client.post(url, json=body, headers=h)
    assert response.status_code == 201, (url, response.text)
    return response.json()


async def catalog(factory: Factory, world: World) -> dict[str, Any]:
    tax = await oh.tax_rule(factory, world.event, "19.00")
    ticket = await oh.item(factory, world.event, "23.50", tax_rule_id=tax.id)
    vip = await oh.variation(factory, ticket, "30.10", (await oh.quota_of(factory, ticket.id)).id)
    shirt = await oh.item(factory, world.event, "10.00", name="Shirt", generate_tickets=True)
    parking = await oh.item(factory, world.event, "5", name="Parking", generate_tickets=False)
    questions = {
        "S": await oh.question(factory, world.event, [ticket], "S", identifier="TXT"),
        "M": await oh.question(
            factory, world.event, [ticket], "M", ["Fish", "Veg", "Meat"], identifier="MEAL"
        ),
        "N": await oh.question(factory, world.event, [ticket], "N", identifier="NUM"),
        "B": await oh.question(factory, world.event, [ticket], "B", identifier="BOOL"),
        "D": await oh.question(factory, world.event, [ticket], "D", identifier="DAY"),
    }
    async with factory.sessionmaker() as s:
        options = list(
            await s.scalars(
                select(QuestionOption.id)
                .where(QuestionOption.question_id == questions["M"].id)
                .order_by(QuestionOption.id)
            )
        )
    return {
        "ticket": ticket.id,
        "vip": vip.id,
        "shirt": shirt.id,
        "parking": parking.id,
        "tax": tax.id,
        "q": {k: q.id for k, q in questions.items()},
        "options": options,
    }


def rich_order(c: dict[str, Any]) -> dict[str, Any]:
    q = c["q"]
    return {
        "status": "p",
        "payment_provider": "banktransfer",
        "email": "ada@example.org",
        "phone": "+49 30 1234",
        "locale": "de",
        "comment": "Grüße ✓ \"quoted\"",
        "checkin_attention": True,
        "checkin_text": "Look up",
        "invoice_address": {"name": "Ada Lovelace", "company": "Engines Ltd", "country": "GB"},
        "api_meta": {"crm": {"id": 7, "tags": ["a", "b"]}},
        "custom_followup_at": "2031-02-03",
        "fees": [{"fee_type": "service", "value": "1.5", "description": "Handling"}],
        "positions": [
            {
                "positionid": 1,
                "item": c["ticket"],
                "variation": c["vip"],
                "attendee_name_parts": {
                    "_scheme": "given_family", "given_name": "Ada", "family_name": "L"
                },
                "attendee_email": "ada@example.org",
                "company": "Engines",
                "street": "1 Road",
                "zipcode": "12345",
                "city": "London",
                "country": "GB",
                "valid_from": "2031-01-01T10:00:00.5+02:00",
                "answers": [
                    {"question": q["S"], "answer": "Zwölf Boxkämpfer"},
                    {"question": q["M"], "options": c["options"][:2]},
                    {"question": q["N"], "answer": "3.5"},
                    {"question": q["B"], "answer": "True"},
                    {"question": q["D"], "answer": "2031-04-05"},
                ],
            },
            {"positionid": 2, "item": c["shirt"], "addon_to": 1, "price": "0"},
            {"positionid": 3, "item": c["parking"], "attendee_name": "Car"},
            {"positionid": 4, "item": c["ticket"], "variation": c["vip"], "price": "12.3"},
        ],
    }  # fmt: skip


async def seed(
    client: httpx.AsyncClient, world: World, factory: Factory
) -> tuple[list[str], list[int]]:
    """Orders in every state (their codes; the first one with everything stored beside it)
    and two check-in lists (their ids)."""
    h = auth(world.admin)
    c = await catalog(factory, world)
    url = oh.url(world)
    rich = await post(client, h, url, rich_order(c))

    def plain(**kw: Any) -> dict[str, Any]:
        positions = [{"item": c["ticket"], "variation": c["vip"]}, {"item": c["shirt"]}]
        return {"positions": positions, **kw}

    valid_pending = await post(
        client, h, url, plain(valid_if_pending=True, invoice_address={"name": "Inv Name"})
    )
    pending = await post(client, h, url, plain(email=None, locale="en"))
    approval = await post(client, h, url, plain(require_approval=True))
    canceled = await post(client, h, url, plain())
    expired = await post(client, h, url, plain())
    paid_free = await post(
        client, h, url, {"status": "p", "positions": [{"item": c["parking"], "price": "0"}]}
    )
    for code, action in ((canceled["code"], "mark_canceled"), (expired["code"], "mark_expired")):
        r = await client.post(f"{url}{code}/{action}/", json={}, headers=h)
        assert r.status_code == 200, r.text
    lists = [
        (await post(client, h, oh.url(world, "checkinlists/"), {"name": name}))["id"]
        for name in ("Main", "Side")
    ]
    await enrich(factory, world, rich["code"], lists)
    gone = rich["positions"][3]["id"]  # a canceled position, shown only when asked for
    r = await client.delete(oh.url(world, f"orderpositions/{gone}/"), headers=h)
    assert r.status_code == 204, r.text
    codes = [
        rich["code"],
        valid_pending["code"],
        pending["code"],
        approval["code"],
        canceled["code"],
        expired["code"],
        paid_free["code"],
    ]
    return codes, lists


async def enrich(factory: Factory, world: World, code: str, lists: list[int]) -> None:
    """What the API writes elsewhere (or never): stored directly on the rich order."""
    async with factory.sessionmaker() as s:
        order = await s.scalar(select(Order).where(Order.code == code))
        assert order is not None
        positions = list(
            await s.scalars(
                select(OrderPosition)
                .where(OrderPosition.order_id == order.id)
                .order_by(OrderPosition.positionid)
            )
        )
        customer = Customer(organizer_id=world.org.id, identifier="CUST42", email="c@example.org")
        device = Device(
            organizer_id=world.org.id,
            device_id=17,
            unique_serial="SERIALPARITY",
            name="Gate scanner",
            initialization_token="init-parity",
        )
        seat = Seat(
            event_id=world.event.id,
            zone_name="Stalls",
            row_name="3",
            row_label=None,
            seat_number="7",
            seat_label="7A",
            seat_guid="stalls-3-7",
        )
        s.add_all([customer, device, seat])
        await s.flush()
        order.customer_id = customer.id
        order.plugin_data = {"plugin": {"x": [1, 2]}}
        order.expires = WHEN
        first, addon = positions[:2]
        first.seat_id = seat.id
        first.blocked = ["admin"]
        first.valid_until = WHEN
        first.voucher_budget_use = Decimal("2.50")
        first.plugin_data = {"k": "v"}
        first.has_print_logs = True
        await s.execute(update(Order).where(Order.id == order.id).values(total=Decimal("1234.56")))
        s.add_all(
            [
                PrintLog(position_id=first.id, datetime=WHEN, source="pretixscan", type="badge",
                         info={"printer": "front"}, device_id=device.id),
                PrintLog(position_id=first.id, datetime=WHEN + dt.timedelta(seconds=1),
                         source="pretixpos", type="ticket", info={}),
                Checkin(event_id=world.event.id, list_id=lists[0], position_id=first.id, seq=1,
                        type="entry", datetime=WHEN, gate_id=5, device_id=device.id,
                        device_number=17),
                Checkin(event_id=world.event.id, list_id=lists[1], position_id=first.id, seq=1,
                        type="exit", datetime=WHEN - dt.timedelta(hours=1), auto_checked_in=True),
                Checkin(event_id=world.event.id, list_id=lists[0], position_id=addon.id, seq=None,
                        type="entry", datetime=WHEN, successful=False, error_reason="product"),
                OrderFee(order_id=order.id, fee_type="shipping", value=Decimal("4.90"),
                         description="Post", internal_type="dhl", tax_rate=Decimal("19.00"),
                         tax_value=Decimal("0.78"), canceled=True),
            ]
        )  # fmt: skip
        payment = OrderPayment(
            order_id=order.id,
            local_id=2,
            state="confirmed",
            amount=Decimal("10.00"),
            provider="giftcard",
            created=WHEN,
            payment_date=WHEN,
            info={"gift_card": {"id": 3, "secret": "GIFT-XYZ", "organizer": "acme", "x": 1}},
        )
        s.add_all(
            [
                payment,
                OrderPayment(order_id=order.id, local_id=3, state="created",
                             amount=Decimal("0.01"), provider="stripe", created=WHEN),
            ]
        )  # fmt: skip
        await s.flush()
        s.add_all(
            [
                OrderRefund(order_id=order.id, local_id=1, state="done", source="admin",
                            amount=Decimal("3.00"), payment_id=payment.id, provider="giftcard",
                            comment="Sorry", created=WHEN, execution_date=WHEN,
                            info={"gift_card": {"id": 3, "secret": "GIFT-XYZ"}}),
                OrderRefund(order_id=order.id, local_id=2, state="created", source="external",
                            amount=Decimal("1.00"), provider="manual", created=WHEN),
            ]
        )  # fmt: skip
        await s.commit()
