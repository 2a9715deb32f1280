"""Kept order, position and check-in list pages (``orders/kept_pages.py``): after every kind
of change, the page a worker answers equals a fresh rendering, and an unchanged page is
answered from the cache (PostgreSQL: the fast lane)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import text, update

from admit.kit.stamps.page import PG_MARGIN, REUSE
from admit.kit.stamps.pagecache import PageCache
from admit.models import OrderPosition, Question
from tests.checkin import helpers as ch
from tests.factories import World, auth
from tests.orders import helpers as h
from tests.orders.test_payments import call, place

# A conditional header sends the request the route's way, unkept: a fresh rendering.
FRESH = {"If-None-Match": '"fresh"'}


class Pages:
    def __init__(self, client, world: World, urls: list[str], cache: PageCache) -> None:
        self.client, self.world, self.urls, self.cache = client, world, urls, cache

    async def get(self, url: str, fresh: bool = False) -> Any:
        headers = {**auth(self.world.admin), **(FRESH if fresh else {})}
        response = await self.client.get(url, headers=headers)
        assert response.status_code == 200, response.text
        return response.json()

    async def kept(self) -> list[Any]:
        """Every page, read until each is answered from the cache (a page read within the
        bound's margin after a change is proved stale again: it takes a moment to hold)."""
        bodies = []
        for url in self.urls:
            for _ in range(20):
                hits = self.cache.hits
                body = await self.get(url)
                if self.cache.hits > hits:
                    break
                await asyncio.sleep(REUSE + PG_MARGIN.total_seconds())
            else:
                raise AssertionError(f"{url} was never answered from the cache")
            bodies.append(body)
        return bodies

    async def prove(self, steps: list[tuple[str, Callable[[], Awaitable[Any]]]]) -> None:
        """For each (name, change): the pages are kept, the change is made, and then the
        answered pages equal fresh renderings and differ from before."""
        for name, change in steps:
            before = await self.kept()
            response = await change()
            if hasattr(response, "status_code"):
                assert response.status_code < 300, (name, response.text)
            after = await self.agree(name)
            assert after != before, f"{name} changed none of the pages: the step proves nothing"

    async def agree(self, step: str) -> list[Any]:
        """The answered pages equal fresh renderings."""
        answered = [await self.get(url) for url in self.urls]
        fresh = [await self.get(url, fresh=True) for url in self.urls]
        for url, a, f in zip(self.urls, answered, fresh, strict=True):
            assert a == f, f"{step}: {url} answered a stale page"
        return answered


async def _raw(factory, statement) -> None:
    async with factory.sessionmaker() as s:
        await s.execute(statement)
        await s.commit()


async def test_kept_pages_show_every_change_at_once(
    client, world: World, factory, page_cache
) -> None:
    item = await h.item(factory, world.event, "10.00")
    size = await h.question(factory, world.event, [item], "S", identifier="SIZE")
    clist = await ch.checkin_list(factory, world.event)
    order = await place(client, world, item.id, 2, status="p", payment_provider="banktransfer")
    code = order["code"]
    first, second = (p["id"] for p in order["positions"])
    pending = await place(client, world, item.id)
    test_order = await place(client, world, item.id, testmode=True)
    pages = Pages(
        client,
        world,
        [
            h.url(world),
            h.url(world, "orderpositions/"),
            ch.event_url(world, f"checkinlists/{clist.id}/positions/"),
        ],
        page_cache,
    )

    def position(pk: int, body: dict) -> Callable[[], Awaitable[Any]]:
        url = h.url(world, f"orderpositions/{pk}/")
        return lambda: client.patch(url, json=body, headers=auth(world.admin))

    steps: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        (
            "order PATCH",
            lambda: client.patch(
                h.url(world, f"orders/{code}/"), json={"comment": "VIP"}, headers=auth(world.admin)
            ),
        ),
        ("answer", position(second, {"answers": [{"question": size.id, "answer": "XL"}]})),
        (
            "payment",
            lambda: call(client, world, "POST", pending["code"], "payments/", {"amount": "1.00"}),
        ),
        ("new order", lambda: place(client, world, item.id)),
        (
            "entry through the redeem lane",
            lambda: ch.redeem(client, world, order["positions"][0]["secret"], [clist.id]),
        ),
        (
            "question identifier (catalog)",
            lambda: _raw_orm_identifier(factory, size.id, "TSHIRT"),
        ),
        (
            "check-in list limited to another product",
            lambda: client.patch(
                ch.event_url(world, f"checkinlists/{clist.id}/"),
                json={"all_products": False, "limit_products": []},
                headers=auth(world.admin),
            ),
        ),
        (
            "raw SQL on a position",
            lambda: _raw(
                factory,
                update(OrderPosition).where(OrderPosition.id == first).values(company="ACME"),
            ),
        ),
        (
            "test mode order deleted",
            lambda: client.delete(
                h.url(world, f"orders/{test_order['code']}/"), headers=auth(world.admin)
            ),
        ),
    ]
    await pages.prove(steps)


async def _raw_orm_identifier(factory, question_id: int, identifier: str) -> None:
    async with factory.sessionmaker() as s:
        question = await s.get(Question, question_id)
        question.identifier = identifier  # an ORM write: it moves the catalog stamp
        await s.commit()


async def test_a_deletion_in_raw_sql_shows_at_once(
    client, world: World, factory, page_cache
) -> None:
    """A row deleted leaves no stamp behind: the deletion stamp (a trigger) is what shows it."""
    item = await h.item(factory, world.event, "10.00")
    await place(client, world, item.id)
    doomed = await place(client, world, item.id)
    canceled = await call(
        client, world, "POST", doomed["code"], "mark_canceled/"
    )  # nothing to recount
    assert canceled.status_code == 200, canceled.text
    pages = Pages(client, world, [h.url(world)], page_cache)
    [before] = await pages.kept()
    assert doomed["code"] in {o["code"] for o in before["results"]}
    await _raw(factory, text("DELETE FROM orders WHERE code = :c").bindparams(c=doomed["code"]))
    [after] = await pages.agree("raw delete")
    assert doomed["code"] not in {o["code"] for o in after["results"]}


async def test_kept_pages_are_per_credential_and_checked_like_the_route(
    client, world: World, factory, page_cache
) -> None:
    item = await h.item(factory, world.event, "10.00")
    await place(client, world, item.id)
    pages = Pages(client, world, [h.url(world)], page_cache)
    await pages.kept()
    hits = page_cache.hits
    refused = await client.get(h.url(world), headers=auth(world.nobody))  # no order permission
    assert refused.status_code == 403
    outsider = await client.get(h.url(world), headers=auth(world.outsider))
    assert outsider.status_code == 403
    assert page_cache.hits == hits


async def test_a_change_committed_after_the_page_was_read_is_not_hidden(
    client, world: World, factory, page_cache
) -> None:
    """The writer's transaction starts (and stamps the order) before the page is read and
    commits after it: the page kept from before the commit is proved stale by its bound
    (the writer's start), not answered again. A bound taken from the clock would hide the
    change until the next one."""
    item = await h.item(factory, world.event, "10.00")
    order = await place(client, world, item.id)
    pages = Pages(client, world, [h.url(world)], page_cache)
    await pages.kept()
    position = order["positions"][0]["id"]
    async with factory.sessionmaker() as writer:
        await writer.execute(
            update(OrderPosition)
            .where(OrderPosition.id == position)
            .values(attendee_email="late@example.org")
        )
        await asyncio.sleep(0.3)  # well past the bound's margin and reuse
        page_cache.clear()  # the page is rendered (and kept) while the writer is open
        before_commit = await pages.get(h.url(world))
        await writer.commit()
    assert before_commit["results"][0]["positions"][0]["attendee_email"] != "late@example.org"
    for _ in range(3):
        shown = await pages.get(h.url(world))
        assert shown["results"][0]["positions"][0]["attendee_email"] == "late@example.org"


async def test_pages_polled_during_concurrent_sales_end_with_every_order(
    client, world: World, factory, page_cache
) -> None:
    """Orders created while the page is polled at the same time, many fills and proofs
    interleaved with the commits: once the sales are done, every poll shows all orders."""
    item = await h.item(factory, world.event, "10.00")
    pages = Pages(client, world, [h.url(world)], page_cache)

    async def poll() -> None:
        for _ in range(5):
            await pages.get(h.url(world))

    await asyncio.gather(
        *(place(client, world, item.id) for _ in range(20)), *(poll() for _ in range(10))
    )
    for _ in range(3):
        shown = await pages.get(h.url(world))
        assert shown["count"] == 20
        assert shown == await pages.get(h.url(world), fresh=True)
