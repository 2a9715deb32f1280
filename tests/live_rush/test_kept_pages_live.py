"""Kept list pages across server processes (PostgreSQL, ``admit serve --workers 2``): each
worker keeps its own pages, and a sale made through either worker shows at once in every
answer of both."""

from __future__ import annotations

import asyncio

from tests.carts import helpers as h
from tests.factories import auth
from tests.live import LiveServer, gather_limited

POLLS = 60  # on fresh connections: both workers answer some (and keep the page)


def _url(live: LiveServer, suffix: str) -> str:
    return f"/api/v1/organizers/{live.world.org.slug}/events/{live.world.event.slug}/{suffix}"


async def _poll(live: LiveServer, suffix: str) -> list[set[str]]:
    headers = auth(live.world.admin)

    async with live.client(connections=16, keep_alive=False) as client:  # any worker answers

        async def one() -> set[str]:
            response = await client.get(_url(live, suffix), headers=headers)
            assert response.status_code == 200, response.text
            return {row["code"] for row in response.json()["results"]}

        return await gather_limited([one for _ in range(POLLS)], 16)


async def test_a_sale_through_any_worker_shows_in_every_kept_page(live_server: LiveServer):
    live = live_server
    ticket = await h.item(live.factory, live.world.event)
    await h.quota(live.factory, live.world.event, 100, [ticket], name="Live")
    order = {"email": "fan@example.org", "positions": [{"item": ticket.id}]}
    headers = auth(live.world.admin)
    seen: set[str] = set()
    async with live.client() as client:
        for _ in range(3):
            for codes in await _poll(live, "orders/"):  # kept by both workers by now
                assert codes == seen
            await asyncio.sleep(0.3)  # past the bound's margin: the pages hold
            for codes in await _poll(live, "orders/"):
                assert codes == seen
            made = await client.post(_url(live, "orders/"), json=order, headers=headers)
            assert made.status_code == 201, made.text
            seen.add(made.json()["code"])
            for codes in await _poll(live, "orders/"):
                assert codes == seen, "a worker answered a page kept from before the sale"
