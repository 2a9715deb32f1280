"""Order creation: round trip, computed vs. trusted prices, tax, validation, quota, simulate."""

from __future__ import annotations

import re
from decimal import Decimal

from sqlalchemy import func, select

from admit.models import Discount, OutgoingMail, SubEvent, SubEventItem
from tests.factories import auth
from tests.orders import helpers as h


async def test_create_round_trip(client, world, factory):
    item = await h.item(factory, world.event, "23.00")
    response = await client.post(
        h.url(world), json=h.body(item.id, 2, comment="hi"), headers=auth(world.admin)
    )
    assert response.status_code == 201, response.text
    data = response.json()
    assert re.fullmatch(r"[A-NP-Z02-9]{5}", data["code"])
    assert data["status"] == "n" and data["total"] == "46.00" and data["comment"] == "hi"
    assert data["event"] == world.event.slug and data["refunds"] == []
    assert [p["positionid"] for p in data["positions"]] == [1, 2]
    for pos in data["positions"]:
        assert re.fullmatch(r"[a-hj-km-np-z2-9]{32}", pos["secret"])
        assert pos["price"] == "23.00" and pos["order"] == data["code"]
    assert data["payments"][0]["state"] == "created" and data["payments"][0]["local_id"] == 1
    assert data["payment_date"] is None
    detail = await client.get(h.url(world, f"orders/{data['code']}/"), headers=auth(world.admin))
    assert detail.json() == data


async def test_paid_order_needs_provider_and_confirms_payment(client, world, factory):
    item = await h.item(factory, world.event, "5.00")
    r = await client.post(h.url(world), json=h.body(item.id, status="p"), headers=auth(world.admin))
    assert r.status_code == 400 and "payment_provider" in r.json()
    r = await client.post(
        h.url(world),
        json=h.body(item.id, status="p", payment_provider="banktransfer"),
        headers=auth(world.admin),
    )
    data = r.json()
    assert data["status"] == "p" and data["payment_provider"] == "banktransfer"
    assert data["payments"][0]["state"] == "confirmed" and data["payment_date"]


async def test_free_order_is_paid(client, world, factory):
    item = await h.item(factory, world.event, "0.00")
    data = (await client.post(h.url(world), json=h.body(item.id), headers=auth(world.admin))).json()
    assert data["status"] == "p" and data["payment_provider"] == "free"


async def test_price_trusted_vs_computed_with_tax(client, world, factory):
    rule = await h.tax_rule(factory, world.event, "19.00", includes=False)
    item = await h.item(factory, world.event, "100.00", tax_rule_id=rule.id)
    payload = {"positions": [{"item": item.id}, {"item": item.id, "price": "50.00"}]}
    data = (await client.post(h.url(world), json=payload, headers=auth(world.admin))).json()
    computed, given = data["positions"]
    assert (computed["price"], computed["tax_value"], computed["tax_rate"]) == (
        "119.00",
        "19.00",
        "19.00",
    )
    assert (given["price"], given["tax_value"]) == ("50.00", "7.98")
    assert data["total"] == "169.00"


async def test_variation_and_subevent_prices_and_discount(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    quota = await h.quota_of(factory, item.id)
    var = await h.variation(factory, item, "12.00", quota.id)
    payload = {"positions": [{"item": item.id, "variation": var.id}]}
    data = (await client.post(h.url(world), json=payload, headers=auth(world.admin))).json()
    assert data["positions"][0]["price"] == "12.00"
    r = await client.post(h.url(world), json=h.body(item.id), headers=auth(world.admin))
    assert r.json()["positions"][0]["variation"] == [
        "You should specify a variation for this item."
    ]

    async with factory.sessionmaker() as s:
        s.add(
            Discount(
                event_id=world.event.id,
                condition_min_count=2,
                benefit_discount_matching_percent=Decimal(50),
            )
        )
        await s.commit()
    payload = {"positions": [{"item": item.id, "variation": var.id}] * 2}
    data = (await client.post(h.url(world), json=payload, headers=auth(world.admin))).json()
    assert [p["price"] for p in data["positions"]] == ["6.00", "6.00"]
    assert data["positions"][0]["discount"] is not None


async def test_subevent_override(client, world, factory):
    async with factory.sessionmaker() as s:
        ev = await s.get(type(world.event), world.event.id)
        ev.has_subevents = True
        sub = SubEvent(event_id=ev.id, name={"en": "D"}, date_from=ev.date_from)
        s.add(sub)
        await s.commit()
    item = await h.item(factory, world.event, "10.00", quota=None)
    async with factory.sessionmaker() as s:
        s.add(SubEventItem(subevent_id=sub.id, item_id=item.id, price=Decimal("7.50")))
        from sqlalchemy import insert

        from admit.models import Quota, quota_items

        q = Quota(event_id=world.event.id, subevent_id=sub.id, name="S", size=10)
        s.add(q)
        await s.flush()
        await s.execute(insert(quota_items).values(quota_id=q.id, item_id=item.id))
        await s.commit()
    r = await client.post(h.url(world), json=h.body(item.id), headers=auth(world.admin))
    assert r.json() == {"positions": [{"subevent": ["You need to set a subevent."]}]}
    payload = {"positions": [{"item": item.id, "subevent": sub.id}]}
    data = (await client.post(h.url(world), json=payload, headers=auth(world.admin))).json()
    assert data["positions"][0]["price"] == "7.50" and data["positions"][0]["subevent"] == sub.id


async def test_validation_errors(client, world, factory):
    item = await h.item(factory, world.event)
    foreign = await h.item(factory, world.other_event)
    cases = [
        ({"positions": []}, {"positions": ["An order cannot be empty."]}),
        (
            {"positions": [{"item": foreign.id}]},
            {"positions": [{"item": [f'Invalid pk "{foreign.id}" - object does not exist.']}]},
        ),
        (
            {"positions": [{"item": item.id, "seat": "abc"}]},
            {"positions": [{"seat": ["The specified seat does not exist."]}]},
        ),
        (
            {"positions": [{"item": item.id, "voucher": "X"}]},
            {"positions": [{"voucher": ['Object with code="X" does not exist.']}]},
        ),
        (
            {"positions": [{"item": item.id}], "sales_channel": "nope"},
            {"sales_channel": ['"nope" is not a valid choice.']},
        ),
        ({"positions": [{"item": item.id, "addon_to": 5}]}, None),
        (
            {"positions": [{"item": item.id}], "email": "bad"},
            {"email": ["Enter a valid email address."]},
        ),
    ]
    for payload, expected in cases:
        r = await client.post(h.url(world), json=payload, headers=auth(world.admin))
        assert r.status_code == 400, payload
        if expected is not None:
            assert r.json() == expected
    assert (await client.get(h.url(world), headers=auth(world.admin))).json()["count"] == 0


async def test_addons_and_custom_secret(client, world, factory):
    item = await h.item(factory, world.event)
    payload = {
        "positions": [
            {"positionid": 1, "item": item.id, "secret": "mysecret"},
            {"positionid": 2, "item": item.id, "addon_to": 1},
        ]
    }
    data = (await client.post(h.url(world), json=payload, headers=auth(world.admin))).json()
    main, addon = data["positions"]
    assert main["secret"] == "mysecret" and addon["addon_to"] == main["id"]
    r = await client.post(
        h.url(world),
        json={"positions": [{"item": item.id, "secret": "mysecret"}]},
        headers=auth(world.admin),
    )
    assert r.json() == {
        "positions": [{"secret": ["You cannot assign a position secret that already exists."]}]
    }


async def test_answers(client, world, factory):
    item = await h.item(factory, world.event)
    other = await h.item(factory, world.event)
    number = await h.question(factory, world.event, [item], "N", identifier="NUM")
    choice = await h.question(
        factory, world.event, [item], "C", options=["a", "b"], identifier="CH"
    )
    not_asked = await h.question(factory, world.event, [other], "S", identifier="OTHER")
    async with factory.sessionmaker() as s:
        from admit.models import QuestionOption

        opt = (
            await s.scalars(select(QuestionOption).where(QuestionOption.question_id == choice.id))
        ).first()
    bad = {
        "positions": [
            {
                "item": item.id,
                "answers": [
                    {"question": number.id, "answer": "abc"},
                    {"question": not_asked.id, "answer": "x"},
                    {"question": choice.id, "answer": "", "options": []},
                ],
            }
        ]
    }
    r = await client.post(h.url(world), json=bad, headers=auth(world.admin))
    errors = r.json()["positions"][0]["answers"]
    assert errors[0] == {"answer": ["A valid number is required."]}
    assert "question" in errors[1] and "options" in errors[2]
    good = {
        "positions": [
            {
                "item": item.id,
                "answers": [
                    {"question": number.id, "answer": 42},
                    {"question": choice.id, "answer": "", "options": [opt.id]},
                ],
            }
        ]
    }
    data = (await client.post(h.url(world), json=good, headers=auth(world.admin))).json()
    answers = data["positions"][0]["answers"]
    assert answers[0]["answer"] == "42" and answers[0]["question_identifier"] == "NUM"
    assert answers[1]["options"] == [opt.id] and answers[1]["option_identifiers"] == ["O0"]


async def test_quota_exceeded_and_force(client, world, factory):
    item = await h.item(factory, world.event, quota=2)
    quota = await h.quota_of(factory, item.id)
    r = await client.post(h.url(world), json=h.body(item.id, 3), headers=auth(world.admin))
    assert r.status_code == 400
    msg = f'There is not enough quota available on quota "{quota.name}" to perform the operation.'
    assert r.json() == {"positions": [{"item": [msg]}] * 3}
    r = await client.post(h.url(world), json=h.body(item.id, 2), headers=auth(world.admin))
    assert r.status_code == 201
    assert await h.availability(client, world, factory, quota.id) == 0
    r = await client.post(
        h.url(world), json=h.body(item.id, 1, force=True), headers=auth(world.admin)
    )
    assert r.status_code == 201
    no_quota = await h.item(factory, world.event, quota=False)
    r = await client.post(h.url(world), json=h.body(no_quota.id), headers=auth(world.admin))
    assert r.json() == {
        "positions": [{"item": ['The product "Ticket" is not assigned to a quota.']}]
    }


async def test_simulate_saves_nothing(client, world, factory):
    item = await h.item(factory, world.event, "3.00", quota=1)
    quota = await h.quota_of(factory, item.id)
    r = await client.post(
        h.url(world), json=h.body(item.id, simulate=True), headers=auth(world.admin)
    )
    assert r.status_code == 201 and r.json()["code"] == "PREVIEW" and r.json()["total"] == "3.00"
    assert (await client.get(h.url(world), headers=auth(world.admin))).json()["count"] == 0
    assert await h.availability(client, world, factory, quota.id) == 1
    r = await client.post(
        h.url(world), json=h.body(item.id, 2, simulate=True), headers=auth(world.admin)
    )
    assert r.status_code == 400


async def test_send_email_queues_mail_and_fees(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    payload = h.body(item.id, send_email=True, fees=[{"fee_type": "service", "value": "1.50"}])
    data = (await client.post(h.url(world), json=payload, headers=auth(world.admin))).json()
    assert data["total"] == "11.50" and data["fees"][0]["value"] == "1.50"
    async with factory.sessionmaker() as s:
        mails = (await s.scalars(select(OutgoingMail))).all()
        assert len(mails) == 1 and mails[0].to == ["buyer@example.org"]
        assert data["code"] in mails[0].subject
    await client.post(h.url(world), json=h.body(item.id), headers=auth(world.admin))
    async with factory.sessionmaker() as s:
        assert await s.scalar(select(func.count()).select_from(OutgoingMail)) == 1


async def test_invoice_address_is_checked_and_normalised(client, world, factory):
    ticket = await h.item(factory, world.event)
    body = {
        "email": "buyer@example.org",
        "positions": [{"item": ticket.id}],
        "invoice_address": {"company": "ACME", "is_business": True, "country": "DE", "x": 1},
    }
    r = await client.post(h.url(world), json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    address = r.json()["invoice_address"]
    assert address["company"] == "ACME" and address["country"] == "DE"
    assert "x" not in address and address["vat_id"] == ""

    body["invoice_address"] = {"country": "XX"}
    r = await client.post(h.url(world), json=body, headers=auth(world.admin))
    assert r.status_code == 400 and "country" in r.json()["invoice_address"], r.text
    body["invoice_address"] = {"is_business": True}
    r = await client.post(h.url(world), json=body, headers=auth(world.admin))
    assert r.status_code == 400 and "invoice_address" in r.json(), r.text
    body["invoice_address"] = "Main street 1"
    r = await client.post(h.url(world), json=body, headers=auth(world.admin))
    assert r.status_code == 400 and "invoice_address" in r.json(), r.text
