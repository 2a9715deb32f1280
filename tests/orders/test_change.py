"""Order changes: patching, canceling, adding and splitting positions, fees, taxes; all or
nothing; the order's total, state and last_modified follow."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import func, select

from admit.models import Notification, OrderFee, OutgoingMail
from tests.factories import auth
from tests.orders import helpers as h

EMPTY = "This operation would leave the order empty. Please cancel the order itself instead."


async def _order(client, world, positions, **kw) -> dict:
    body = {"email": "buyer@example.org", "positions": positions, **kw}
    r = await client.post(h.url(world), json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    return r.json()


async def _change(client, world, code: str, body: dict):
    # Canceled positions and fees shown: the tests check what a change canceled.
    url = f"{h.url(world)}{code}/change/?include_canceled_positions=true&include_canceled_fees=true"
    return await client.post(url, json=body, headers=auth(world.admin))


async def _get(client, world, code: str) -> dict:
    r = await client.get(f"{h.url(world)}{code}/", headers=auth(world.admin))
    assert r.status_code == 200
    return r.json()


async def _actions(factory, code: str) -> list[str]:
    async with factory.sessionmaker() as s:
        rows = await s.scalars(select(Notification).order_by(Notification.id))
        return [n.action for n in rows if n.payload.get("code") == code]


async def test_patch_price_and_tax_rule_recomputes_total_and_taxes(client, world, factory):
    rule = await h.tax_rule(factory, world.event, "19.00")
    item = await h.item(factory, world.event, "10.00")
    order = await _order(client, world, [{"item": item.id}, {"item": item.id}])
    first, second = (p["id"] for p in order["positions"])
    r = await _change(
        client,
        world,
        order["code"],
        {
            "patch_positions": [
                {"position": first, "body": {"price": "23.80", "tax_rule": rule.id}},
                {"position": second, "body": {"attendee_name": "Ada", "secret": "mysecret1"}},
            ]
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["code"] == order["code"]
    assert body["total"] == "33.80"
    p1, p2 = body["positions"]
    assert (p1["price"], p1["tax_rule"], p1["tax_rate"], p1["tax_value"]) == (
        "23.80",
        rule.id,
        "19.00",
        "3.80",
    )
    assert p2["attendee_name"] == "Ada" and p2["secret"] == "mysecret1"
    assert body["last_modified"] > order["last_modified"]
    assert await _get(client, world, order["code"]) == body
    actions = await _actions(factory, order["code"])
    for action in (
        "service.event.order.changed.price",
        "service.event.order.changed.tax_rule",
        "service.event.order.changed.secret",
        "service.event.order.modified",
    ):
        assert action in actions


async def test_patch_item_and_variation(client, world, factory):
    a = await h.item(factory, world.event, "10.00")
    b = await h.item(factory, world.event, "20.00", name="Other")
    qb = await h.quota_of(factory, b.id)
    var = await h.variation(factory, b, "25.00", qb.id)
    order = await _order(client, world, [{"item": a.id}, {"item": a.id}])
    pid = order["positions"][0]["id"]
    missing = await _change(
        client,
        world,
        order["code"],
        {"patch_positions": [{"position": pid, "body": {"item": b.id}}]},
    )
    assert missing.status_code == 400
    assert missing.json() == {
        "patch_positions": [
            {"body": {"variation": ["You need to select a variation of the product."]}}
        ]
    }
    r = await _change(
        client,
        world,
        order["code"],
        {"patch_positions": [{"position": pid, "body": {"item": b.id, "variation": var.id}}]},
    )
    assert r.status_code == 200, r.text
    changed = r.json()["positions"][0]
    assert (changed["item"], changed["variation"], changed["price"]) == (b.id, var.id, "10.00")
    assert r.json()["total"] == "20.00"  # the price stays unless it is changed too
    assert "service.event.order.changed.item" in await _actions(factory, order["code"])
    assert await h.availability(client, world, factory, qb.id) == 99
    qa = await h.quota_of(factory, a.id)
    assert await h.availability(client, world, factory, qa.id) == 99


async def test_moving_within_one_full_quota_is_allowed_growing_it_is_not(client, world, factory):
    a = await h.item(factory, world.event, "10.00", quota=2)
    qa = await h.quota_of(factory, a.id)
    b = await h.item(factory, world.event, "10.00", quota=False, name="B")
    async with factory.sessionmaker() as s:
        from sqlalchemy import insert

        from admit.models import quota_items

        await s.execute(insert(quota_items).values(quota_id=qa.id, item_id=b.id))
        await s.commit()
    order = await _order(client, world, [{"item": a.id}, {"item": a.id}])
    assert await h.availability(client, world, factory, qa.id) == 0
    pid = order["positions"][0]["id"]
    moved = await _change(
        client,
        world,
        order["code"],
        {"patch_positions": [{"position": pid, "body": {"item": b.id}}]},
    )
    assert moved.status_code == 200, moved.text
    grown = await _change(client, world, order["code"], {"create_positions": [{"item": b.id}]})
    assert grown.status_code == 400
    assert grown.json() == {
        "non_field_errors": [
            f'There is not enough quota available on quota "{qa.name}" to perform the operation.'
        ]
    }
    # Canceling one and adding one in the same change balances out.
    swap = await _change(
        client,
        world,
        order["code"],
        {"cancel_positions": [{"position": pid}], "create_positions": [{"item": a.id}]},
    )
    assert swap.status_code == 200, swap.text
    assert [p["item"] for p in swap.json()["positions"] if not p["canceled"]] == [a.id, a.id]


async def test_cancel_positions_with_addons_and_never_the_last(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    addon = await h.item(factory, world.event, "2.00", name="Addon")
    order = await _order(
        client,
        world,
        [
            {"item": item.id, "positionid": 1},
            {"item": addon.id, "positionid": 2, "addon_to": 1},
            {"item": item.id, "positionid": 3},
        ],
    )
    base, extra, other = (p["id"] for p in order["positions"])
    r = await _change(client, world, order["code"], {"cancel_positions": [{"position": base}]})
    assert r.status_code == 200, r.text
    canceled = {p["id"]: p["canceled"] for p in r.json()["positions"]}
    assert canceled == {base: True, extra: True, other: False}
    assert r.json()["total"] == "10.00"
    last = await _change(client, world, order["code"], {"cancel_positions": [{"position": other}]})
    assert last.status_code == 400
    assert last.json() == {"non_field_errors": [EMPTY]}
    again = await _change(client, world, order["code"], {"cancel_positions": [{"position": base}]})
    assert again.json() == {
        "cancel_positions": [{"position": [f'Invalid pk "{base}" - object does not exist.']}]
    }
    assert "service.event.order.changed.cancel" in await _actions(factory, order["code"])


async def test_create_positions_and_addons(client, world, factory):
    item = await h.item(factory, world.event, "10.00", quota=3)
    addon = await h.item(factory, world.event, "2.00", name="Addon")
    order = await _order(client, world, [{"item": item.id}])
    base = order["positions"][0]["id"]
    r = await _change(
        client,
        world,
        order["code"],
        {
            "create_positions": [
                {"item": item.id, "attendee_name": "New"},
                {"item": addon.id, "addon_to": base, "price": "1.50"},
            ]
        },
    )
    assert r.status_code == 200, r.text
    positions = r.json()["positions"]
    assert [p["positionid"] for p in positions] == [1, 2, 3]
    assert positions[1]["attendee_name"] == "New" and positions[1]["price"] == "10.00"
    assert positions[2]["addon_to"] == base and positions[2]["price"] == "1.50"
    assert r.json()["total"] == "21.50"
    quota = await h.quota_of(factory, item.id)
    assert await h.availability(client, world, factory, quota.id) == 1
    bad = await _change(
        client,
        world,
        order["code"],
        {
            "create_positions": [
                {"item": item.id},
                {"item": addon.id, "addon_to": positions[2]["id"]},
            ]
        },
    )
    assert bad.status_code == 400
    body = bad.json()
    assert body["create_positions"][0] == {}
    assert "addon_to" in body["create_positions"][1]
    unknown = await _change(client, world, order["code"], {"create_positions": [{"item": 999999}]})
    assert unknown.json() == {
        "create_positions": [{"item": ['Invalid pk "999999" - object does not exist.']}]
    }
    assert "service.event.order.changed.add" in await _actions(factory, order["code"])


async def test_all_or_nothing(client, world, factory):
    item = await h.item(factory, world.event, "10.00", quota=2)
    order = await _order(client, world, [{"item": item.id}, {"item": item.id}])
    first = order["positions"][0]["id"]
    before = await _get(client, world, order["code"])
    r = await _change(
        client,
        world,
        order["code"],
        {
            "cancel_positions": [{"position": first}],
            "patch_positions": [{"position": order["positions"][1]["id"], "body": {"price": "1"}}],
            "create_positions": [{"item": item.id}, {"item": item.id}],
        },
    )
    assert r.status_code == 400
    assert "non_field_errors" in r.json()
    assert await _get(client, world, order["code"]) == before
    assert await _actions(factory, order["code"]) == ["service.event.order.placed"]


async def test_split_pending_order(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    order = await _order(client, world, [{"item": item.id}, {"item": item.id}, {"item": item.id}])
    moved = order["positions"][1]
    r = await _change(
        client, world, order["code"], {"split_positions": [{"position": moved["id"]}]}
    )
    assert r.status_code == 200, r.text
    assert r.json()["total"] == "20.00"
    assert [p["id"] for p in r.json()["positions"]] == [
        order["positions"][0]["id"],
        order["positions"][2]["id"],
    ]
    async with factory.sessionmaker() as s:
        codes = [
            n.payload["code"]
            for n in await s.scalars(select(Notification))
            if n.action == "service.event.order.changed.split_from"
        ]
    assert len(codes) == 1
    new = await _get(client, world, codes[0])
    assert new["status"] == "n" and new["total"] == "10.00" and new["email"] == order["email"]
    assert [(p["id"], p["secret"]) for p in new["positions"]] == [(moved["id"], moved["secret"])]
    assert new["positions"][0]["order"] == new["code"]
    assert [(p["state"], p["amount"]) for p in new["payments"]] == [("created", "10.00")]
    original = await _get(client, world, order["code"])
    assert original["payments"][0]["amount"] == "20.00"
    everything = await _change(
        client,
        world,
        order["code"],
        {"split_positions": [{"position": p["id"]} for p in original["positions"]]},
    )
    assert everything.json() == {"non_field_errors": [EMPTY]}


async def test_split_paid_order_offsets_the_payment(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    order = await _order(
        client, world, [{"item": item.id}, {"item": item.id}], status="p", payment_provider="manual"
    )
    r = await _change(
        client,
        world,
        order["code"],
        {"split_positions": [{"position": order["positions"][0]["id"]}]},
    )
    assert r.status_code == 200, r.text
    assert (r.json()["status"], r.json()["total"]) == ("p", "10.00")
    async with factory.sessionmaker() as s:
        split_code = next(
            n.payload["code"]
            for n in await s.scalars(select(Notification))
            if n.action == "service.event.order.changed.split_from"
        )
    new = await _get(client, world, split_code)
    assert new["status"] == "p"
    assert [(p["state"], p["provider"], p["amount"]) for p in new["payments"]] == [
        ("confirmed", "offsetting", "10.00")
    ]


async def test_paid_order_growing_becomes_pending_and_shrinking_pending_becomes_paid(
    client, world, factory
):
    item = await h.item(factory, world.event, "10.00")
    order = await _order(client, world, [{"item": item.id}], status="p", payment_provider="manual")
    pid = order["positions"][0]["id"]
    grown = await _change(
        client,
        world,
        order["code"],
        {"patch_positions": [{"position": pid, "body": {"price": "15.00"}}]},
    )
    assert grown.status_code == 200, grown.text
    assert (grown.json()["status"], grown.json()["total"]) == ("n", "15.00")
    back = await _change(
        client,
        world,
        order["code"],
        {"patch_positions": [{"position": pid, "body": {"price": "10.00"}}]},
    )
    assert back.json()["status"] == "p"
    actions = await _actions(factory, order["code"])
    assert actions.count("service.event.order.paid") == 2  # created paid, then paid again


async def test_fees_and_tax_recalculation(client, world, factory):
    rule = await h.tax_rule(factory, world.event, "10.00")
    item = await h.item(factory, world.event, "11.00", tax_rule_id=rule.id)
    order = await _order(
        client,
        world,
        [{"item": item.id}],
        fees=[
            {"fee_type": "shipping", "value": "5.00", "tax_rule": rule.id},
            {"fee_type": "service", "value": "1.00"},
        ],
    )
    shipping, service = (f["id"] for f in order["fees"])
    assert order["total"] == "17.00"
    r = await _change(
        client,
        world,
        order["code"],
        {
            "patch_fees": [{"fee": shipping, "body": {"value": "5.50"}}],
            "cancel_fees": [{"fee": service}],
        },
    )
    assert r.status_code == 200, r.text
    fees = {f["id"]: f for f in r.json()["fees"]}
    assert (fees[shipping]["value"], fees[shipping]["tax_value"]) == ("5.50", "0.50")
    assert fees[service]["canceled"] is True
    assert r.json()["total"] == "16.50"
    # The rule's rate changes; keep_net rebuilds the gross price from the net one.
    async with factory.sessionmaker() as s:
        from admit.models import TaxRule

        stored = await s.get(TaxRule, rule.id)
        stored.rate = Decimal("20.00")
        await s.commit()
    net = await _change(client, world, order["code"], {"recalculate_taxes": "keep_net"})
    assert net.status_code == 200, net.text
    position = net.json()["positions"][0]
    assert (position["price"], position["tax_rate"], position["tax_value"]) == (
        "12.00",
        "20.00",
        "2.00",
    )
    gross = await _change(client, world, order["code"], {"recalculate_taxes": "keep_gross"})
    assert gross.json()["positions"][0]["price"] == "12.00"
    unknown = await _change(client, world, order["code"], {"cancel_fees": [{"fee": 999999}]})
    assert unknown.json() == {
        "cancel_fees": [{"fee": ['Invalid pk "999999" - object does not exist.']}]
    }
    async with factory.sessionmaker() as s:
        assert await s.scalar(select(func.count()).select_from(OrderFee)) == 2


async def test_only_pending_or_paid_orders_change(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    order = await _order(client, world, [{"item": item.id}])
    await client.post(f"{h.url(world)}{order['code']}/mark_canceled/", headers=auth(world.admin))
    r = await _change(client, world, order["code"], {"create_positions": [{"item": item.id}]})
    assert r.status_code == 400
    assert r.json() == {"non_field_errors": ["Only pending or paid orders can be changed."]}


async def test_empty_change_changes_nothing(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    order = await _order(client, world, [{"item": item.id}])
    r = await _change(client, world, order["code"], {})
    assert r.status_code == 200
    assert r.json() == await _get(client, world, order["code"])
    assert r.json()["last_modified"] == order["last_modified"]


@pytest.mark.parametrize(
    "body",
    [
        {"patch_positions": "x"},
        {"patch_positions": [{"position": "a", "body": {}}]},
        {"patch_positions": [{"position": 1}]},
        {"cancel_positions": [{}]},
        {"create_positions": [{"price": "1.00"}]},
        {"recalculate_taxes": "keep_all"},
        {"patch_fees": [{"fee": 1, "body": {"value": "abc"}}]},
        {"cancel_positions": [{"position": 2**40}]},
        {"create_positions": [{"item": 2**40, "subevent": 2**40, "variation": 2**40}]},
        {"patch_positions": [{"position": 1, "body": {"item": 2**40, "tax_rule": 2**40}}]},
    ],
)
async def test_bad_bodies_are_400(client, world, factory, body):
    item = await h.item(factory, world.event, "10.00")
    order = await _order(client, world, [{"item": item.id}])
    if "patch_positions" in body and isinstance(body["patch_positions"], list):
        body["patch_positions"][0]["position"] = (
            order["positions"][0]["id"]
            if body["patch_positions"][0].get("position") == 1
            else body["patch_positions"][0].get("position")
        )
    r = await _change(client, world, order["code"], body)
    assert r.status_code == 400, r.text
    assert isinstance(r.json(), dict) and r.json()


async def test_unknown_order_and_other_tenant(client, world, factory):
    r = await _change(client, world, "NOPE1", {})
    assert r.status_code == 404
    item = await h.item(factory, world.event, "10.00")
    order = await _order(client, world, [{"item": item.id}])
    other = await client.post(
        f"/api/v1/organizers/{world.other.slug}/events/{world.other_event.slug}/orders/"
        f"{order['code']}/change/",
        json={},
        headers=auth(world.outsider),
    )
    assert other.status_code == 404


async def test_send_email_and_resend_link(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    order = await _order(client, world, [{"item": item.id}, {"item": item.id}])
    r = await _change(
        client,
        world,
        order["code"],
        {"cancel_positions": [{"position": order["positions"][0]["id"]}], "send_email": True},
    )
    assert r.status_code == 200
    link = await client.post(
        f"{h.url(world)}{order['code']}/resend_link/", headers=auth(world.admin)
    )
    assert link.status_code == 204
    async with factory.sessionmaker() as s:
        mails = (await s.scalars(select(OutgoingMail).order_by(OutgoingMail.id))).all()
    assert [m.to for m in mails] == [["buyer@example.org"], ["buyer@example.org"]]
    assert "changed" in mails[0].subject and order["code"] in mails[1].body
    assert order["secret"] in mails[1].body
    no_mail = await _order(client, world, [{"item": item.id}], email=None)
    r = await client.post(
        f"{h.url(world)}{no_mail['code']}/resend_link/", headers=auth(world.admin)
    )
    assert r.status_code == 400
    assert r.json() == {"detail": "There is no email address associated with this order."}
    missing = await client.post(f"{h.url(world)}NOPE1/resend_link/", headers=auth(world.admin))
    assert missing.status_code == 404


async def test_patch_validity_answers_and_attendee_fields(client, world, factory):
    item = await h.item(factory, world.event, "10.00")
    question = await h.question(factory, world.event, [item], "S", identifier="SHIRT")
    order = await _order(client, world, [{"item": item.id}])
    pid = order["positions"][0]["id"]
    bad = await _change(
        client,
        world,
        order["code"],
        {
            "patch_positions": [
                {
                    "position": pid,
                    "body": {
                        "valid_from": "2030-01-02T00:00:00Z",
                        "valid_until": "2030-01-01T00:00:00Z",
                    },
                }
            ]
        },
    )
    assert bad.json() == {
        "patch_positions": [
            {"body": {"non_field_errors": ["valid_until must not be before valid_from."]}}
        ]
    }
    wrong_answer = await _change(
        client,
        world,
        order["code"],
        {"patch_positions": [{"position": pid, "body": {"answers": [{"question": 999999}]}}]},
    )
    assert wrong_answer.status_code == 400
    assert "answers" in wrong_answer.json()["patch_positions"][0]["body"]
    r = await _change(
        client,
        world,
        order["code"],
        {
            "patch_positions": [
                {
                    "position": pid,
                    "body": {
                        "valid_from": "2030-01-01T00:00:00Z",
                        "attendee_name_parts": {"given_name": "Ada", "family_name": "L"},
                        "attendee_email": "ada@example.org",
                        "city": "Berlin",
                        "answers": [{"question": question.id, "answer": "XL"}],
                    },
                }
            ]
        },
    )
    assert r.status_code == 200, r.text
    position = r.json()["positions"][0]
    assert position["valid_from"] == "2030-01-01T00:00:00Z"
    assert (position["attendee_name"], position["attendee_email"], position["city"]) == (
        "Ada L",
        "ada@example.org",
        "Berlin",
    )
    assert [(a["question_identifier"], a["answer"]) for a in position["answers"]] == [
        ("SHIRT", "XL")
    ]
    actions = await _actions(factory, order["code"])
    assert "service.event.order.changed.validity" in actions
    assert "service.event.order.modified" in actions
