"""The ``service.event.order.changed.*`` types an order change records, one per kind of
change, each only for what really changed (the producer test of those types)."""

from __future__ import annotations

from sqlalchemy import select, update

from admit.models import Event, Notification
from tests.factories import auth
from tests.orders import helpers as h
from tests.seating import helpers as seating


async def _actions(factory, code: str) -> list[str]:
    async with factory.sessionmaker() as s:
        rows = await s.scalars(select(Notification).order_by(Notification.id))
        return [n.action for n in rows if n.payload.get("code") == code]


async def _change(client, world, code: str, body: dict) -> dict:
    r = await client.post(f"{h.url(world)}{code}/change/", json=body, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    return r.json()


async def test_order_change_types(client, world, factory):
    rule = await h.tax_rule(factory, world.event, "7.00")
    item = await h.item(factory, world.event, "10.00")
    other = await h.item(factory, world.event, "10.00", name="Other")
    r = await client.post(
        h.url(world),
        json=h.body(item.id, 3, fees=[{"fee_type": "service", "value": "1.00"}] * 2),
        headers=auth(world.admin),
    )
    order = r.json()
    code = order["code"]
    one, two, three = (p["id"] for p in order["positions"])
    fee_a, fee_b = (f["id"] for f in order["fees"])
    await _change(
        client,
        world,
        code,
        {
            "patch_positions": [
                {"position": one, "body": {"item": other.id, "price": "12.00"}},
                {"position": two, "body": {"tax_rule": rule.id, "valid_until": None}},
            ],
            "cancel_positions": [{"position": three}],
            "create_positions": [{"item": item.id}],
            "patch_fees": [{"fee": fee_a, "body": {"value": "2.00"}}],
            "cancel_fees": [{"fee": fee_b}],
            "recalculate_taxes": "keep_gross",
        },
    )
    recorded = await _actions(factory, code)
    for action in (
        "service.event.order.changed.item",
        "service.event.order.changed.price",
        "service.event.order.changed.tax_rule",
        "service.event.order.changed.cancel",
        "service.event.order.changed.add",
        "service.event.order.changed.feevalue",
        "service.event.order.changed.cancelfee",
        "service.event.order.changed.recalculate_taxes",
    ):
        assert recorded.count(action) == 1, (action, recorded)
    # valid_until was None already: no validity change recorded.
    assert "service.event.order.changed.validity" not in recorded
    detail = (await client.get(f"{h.url(world)}{code}/", headers=auth(world.admin))).json()
    await _change(client, world, code, {"split_positions": [{"position": one}]})
    recorded = await _actions(factory, code)
    assert recorded.count("service.event.order.changed.split") == 1
    async with factory.sessionmaker() as s:
        split_from = [
            n.payload["code"]
            for n in await s.scalars(select(Notification))
            if n.action == "service.event.order.changed.split_from"
        ]
    assert len(split_from) == 1 and split_from[0] != code
    assert detail["total"] == "34.00"  # 12 + 10 + 10 (new) + 2 (fee)


async def test_subevent_and_seat_change_types(client, world, factory):
    async with factory.sessionmaker() as s:
        await s.execute(update(Event).where(Event.id == world.event.id).values(has_subevents=True))
        await s.commit()
    item = await h.item(factory, world.event, "10.00", quota=False)
    first = await seating.subevent(factory, world.event, "First")
    second = await seating.subevent(factory, world.event, "Second")
    await factory.quota(world.event, 5, items=[item], subevent=first)
    small = await factory.quota(world.event, 1, items=[item], subevent=second, name="Second")
    r = await client.post(
        h.url(world),
        json={"positions": [{"item": item.id, "subevent": first.id}] * 2},
        headers=auth(world.admin),
    )
    assert r.status_code == 201, r.text
    code = r.json()["code"]
    one, two = (p["id"] for p in r.json()["positions"])
    moved = await _change(
        client,
        world,
        code,
        {"patch_positions": [{"position": one, "body": {"subevent": second.id}}]},
    )
    assert [p["subevent"] for p in moved["positions"]] == [second.id, first.id]
    full = await client.post(
        f"{h.url(world)}{code}/change/",
        json={"patch_positions": [{"position": two, "body": {"subevent": second.id}}]},
        headers=auth(world.admin),
    )
    assert full.json() == {
        "non_field_errors": [
            f'There is not enough quota available on quota "{small.name}" to perform the operation.'
        ]
    }
    assert "service.event.order.changed.subevent" in await _actions(factory, code)


async def test_seat_change_type(client, world, factory):
    stalls = await seating.ticket(factory, world.event, "Stalls")
    await seating.seated_event(factory, world.event, {"Stalls": stalls.id, "Balcony": None})
    r = await seating.order(client, world, [{"item": stalls.id, "seat": "1-1"}])
    code, pid = r.json()["code"], r.json()["positions"][0]["id"]
    await _change(
        client, world, code, {"patch_positions": [{"position": pid, "body": {"seat": "1-2"}}]}
    )
    assert "service.event.order.changed.seat" in await _actions(factory, code)
