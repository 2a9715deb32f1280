"""The redeem hot path: a successful scan costs at most four SQL statements, authentication
included (PostgreSQL: three; BEGIN/COMMIT are not counted and not sent)."""

from __future__ import annotations

from tests.checkin import helpers as h
from tests.factories import World


async def test_successful_redeem_takes_at_most_four_statements(
    client, world: World, factory, count_queries
):
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event)
    _, positions = await h.order(factory, world.event, item, n=3)
    # warm up (compiled statements, pools)
    assert (await h.redeem(client, world, positions[0].secret, [clist.id])).status_code == 201

    with count_queries() as q:
        response = await h.redeem(client, world, positions[1].secret, [clist.id], nonce="n-1")
    assert response.status_code == 201, response.text
    assert q.count <= 4, q.statements
    print("statements per successful redeem:", q.count)

    # A failed scan (already redeemed) is as cheap.
    with count_queries() as q:
        response = await h.redeem(client, world, positions[1].secret, [clist.id])
    assert response.json()["reason"] == "already_redeemed"
    assert q.count <= 4, q.statements
