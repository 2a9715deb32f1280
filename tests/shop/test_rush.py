"""An on-sale's two steps as the rush takes them (``bench/shop_rush.py``), and the rules that
let them take no quota lock over round trips:

- a plain cart position is sold by the carts' one-call sale (PostgreSQL): a burst of carts
  gets exactly the quota, every other buyer the sold-out sentence;
- a checkout whose cart still holds its units takes them over without the quota lock (it
  goes through while another transaction holds that lock), but is still refused when the
  organizer closed the quota since, and when the reservation would run out before the
  commit (nothing written then).
"""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select, text, update

from admit.models import CartPosition, Order, Quota
from admit.orders import create
from tests.conftest import asgi_client
from tests.shop import helpers as h

BODY = {"email": "rush@example.org", "payment_provider": "banktransfer"}


async def _carts(client, world, item_id: int, count: int) -> list[str]:
    answers = [await h.cart(client, world, {"item": item_id}) for _ in range(count)]
    assert all(r.status_code == 201 for r in answers), [r.text for r in answers]
    return [r.json()["cart_id"] for r in answers]


async def _count(factory, model) -> int:
    async with factory.sessionmaker() as session:
        return await session.scalar(select(func.count()).select_from(model))


async def test_a_burst_of_carts_gets_exactly_the_quota(client, world, factory, clean_app):
    shop = await h.setup(factory, world, size=5)
    async with asgi_client(clean_app) as c:
        answers = await asyncio.gather(
            *(h.cart(c, world, {"item": shop.ticket.id}) for _ in range(15))
        )
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [201] * 5 + [400] * 10, [r.text for r in answers]
    refused = {r.json()["non_field_errors"][0] for r in answers if r.status_code == 400}
    assert refused == {'There are no more tickets available in the quota "Tickets".'}
    assert await _count(factory, CartPosition) == 5
    carts = {r.json()["cart_id"] for r in answers if r.status_code == 201}
    views = [await client.get(f"{h.base(world)}/carts/{cid}/") for cid in carts]
    assert all(v.json()["total"] == "23.00" for v in views)  # each cart shows its ticket


async def test_held_carts_check_out_while_the_quota_is_locked(client, world, factory, clean_app):
    if clean_app.state.db.is_sqlite:
        pytest.skip("row locks are PostgreSQL's")
    shop = await h.setup(factory, world, size=3)
    carts = await _carts(client, world, shop.ticket.id, 3)
    async with factory.sessionmaker() as holder:
        # Another sale holds the quota's lock for the whole rush: the checkouts do not wait
        # for it (they would answer 409 after the lock timeout otherwise).
        await holder.execute(select(Quota.id).where(Quota.id == shop.quota.id).with_for_update())
        async with asgi_client(clean_app) as c:
            answers = await asyncio.wait_for(
                asyncio.gather(
                    *(
                        c.post(f"{h.base(world)}/checkout/", json={**BODY, "cart_id": x})
                        for x in carts
                    )
                ),
                timeout=4,
            )
        await holder.rollback()
    assert [r.status_code for r in answers] == [201] * 3, [r.text for r in answers]
    assert await _count(factory, Order) == 3
    assert await _count(factory, CartPosition) == 0


async def test_a_closed_quota_refuses_a_held_cart(client, world, factory):
    shop = await h.setup(factory, world, size=3)
    (cart,) = await _carts(client, world, shop.ticket.id, 1)
    async with factory.sessionmaker() as session:
        await session.execute(update(Quota).where(Quota.id == shop.quota.id).values(closed=True))
        await session.commit()
    r = await h.buy(client, world, cart, payment_provider="banktransfer")
    assert r.status_code == 400, r.text
    assert "Tickets" in r.text  # the quota is named in a sentence
    assert await _count(factory, Order) == 0
    assert await _count(factory, CartPosition) == 1  # the cart is as it was


async def test_a_reservation_running_out_before_the_commit_is_refused(
    client, world, factory, monkeypatch
):
    shop = await h.setup(factory, world, size=3)
    (cart,) = await _carts(client, world, shop.ticket.id, 1)
    # As if the checkout took until the reservation's last seconds: the units would no
    # longer be held at the commit, so nothing may be written.
    monkeypatch.setattr(create, "HELD_MARGIN", create.dt.timedelta(0))
    monkeypatch.setattr(create, "COMMIT_MARGIN", create.dt.timedelta(hours=1))
    r = await h.buy(client, world, cart, payment_provider="banktransfer")
    assert r.status_code == 400, r.text
    assert r.json() == {"non_field_errors": [create.TOO_SLOW]}
    assert await _count(factory, Order) == 0
    async with factory.sessionmaker() as session:
        held = await session.scalar(select(func.count()).select_from(CartPosition))
        future = await session.scalar(
            select(func.count()).select_from(CartPosition).where(CartPosition.expires > func.now())
        )
    assert held == 1 and future == 1  # rolled back: still held, not taken over
    monkeypatch.undo()
    r = await h.buy(client, world, cart, payment_provider="banktransfer")
    assert r.status_code == 201, r.text


async def test_the_ledger_moves_the_unit_from_carts_to_pending(client, world, factory):
    shop = await h.setup(factory, world, size=3)
    (cart,) = await _carts(client, world, shop.ticket.id, 1)
    r = await h.buy(client, world, cart, payment_provider="banktransfer")
    assert r.status_code == 201, r.text
    async with factory.sessionmaker() as session:
        row = (
            await session.execute(
                text("SELECT pending, paid, carts FROM sales_counts WHERE item_id = :i"),
                {"i": shop.ticket.id},
            )
        ).one()
    assert tuple(row) == (1, 0, 0)
