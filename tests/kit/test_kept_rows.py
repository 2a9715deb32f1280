"""Kept voucher and check-in pages (``kept_by``, row stamps of ``models/row_stamps.py``): after
every kind of change the page a worker answers equals a fresh rendering (PostgreSQL)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update

from admit.models import Checkin, Voucher
from tests.checkin import helpers as ch
from tests.factories import World, auth
from tests.orders.test_kept_pages import Pages, _raw
from tests.vouchers import helpers as vh


async def test_kept_voucher_pages_show_every_change(
    client, world: World, factory, page_cache
) -> None:
    ticket = await vh.item(factory, world.event)
    await factory.quota(world.event, 100, items=[ticket])
    kept = await vh.voucher(factory, world.event, "KEEPME", max_usages=5, item_id=ticket.id)
    doomed = await vh.voucher(factory, world.event, "GONE01")
    pages = Pages(client, world, [vh.url_of(world, "vouchers/")], page_cache)
    admin = auth(world.admin)
    await pages.prove(
        [
            (
                "redeemed by an order (the order lane)",
                lambda: client.post(
                    vh.url_of(world, "orders/"),
                    json=vh.order_body(ticket.id, voucher="KEEPME"),
                    headers=admin,
                ),
            ),
            (
                "PATCH",
                lambda: client.patch(
                    vh.url_of(world, f"vouchers/{kept.id}/"), json={"tag": "press"}, headers=admin
                ),
            ),
            (
                "raw SQL",
                lambda: _raw(
                    factory, update(Voucher).where(Voucher.id == kept.id).values(comment="raw")
                ),
            ),
            (
                "deleted",
                lambda: client.delete(vh.url_of(world, f"vouchers/{doomed.id}/"), headers=admin),
            ),
            ("created", lambda: vh.voucher(factory, world.event, "NEW001")),
        ],
    )


async def test_kept_checkin_pages_show_every_scan(
    client, world: World, factory, page_cache
) -> None:
    item = await ch.ticket(factory, world.event)
    clist = await ch.checkin_list(factory, world.event)
    _, [paid] = await ch.order(factory, world.event, item)
    _, [pending] = await ch.order(factory, world.event, item, status="n")
    pages = Pages(client, world, [ch.event_url(world, "checkins/")], page_cache)

    async def annul() -> Any:
        return await client.post(
            ch.rpc_url(world, "annul"),
            json={"nonce": "n1", "lists": [clist.id]},
            headers=auth(world.admin),
        )

    await pages.prove(
        [
            (
                "entry (the redeem lane)",
                lambda: ch.redeem(client, world, paid.secret, [clist.id], nonce="n1"),
            ),
            ("failed scan", lambda: ch.redeem(client, world, pending.secret, [clist.id])),
            ("annulment", annul),
            (
                "raw SQL on a failed scan",
                lambda: _raw(
                    factory,
                    update(Checkin)
                    .where(Checkin.successful.is_(False))
                    .values(gate_id=None, error_explanation="x"),
                ),
            ),
            (
                "the list deleted (its scans go with it)",
                lambda: client.delete(
                    ch.event_url(world, f"checkinlists/{clist.id}/"), headers=auth(world.admin)
                ),
            ),
        ],
    )
