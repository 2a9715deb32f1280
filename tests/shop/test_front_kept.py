"""The shop's front page kept per worker (``shop/front_pages.py``): answered to plain visitors
without a database statement, each with their own CSRF token that the cart accepts; visitors
with a cart, a voucher or a language choice rendered as ever; every change shown once the
kept page is older than the bound. On PostgreSQL the kept page comes from the fast lane, on
SQLite from the route."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import update

from admit.models import Event, Item, Quota
from admit.shop import front_pages
from tests.conftest import asgi_client
from tests.oauth.helpers import csrf
from tests.shop import helpers as h

FRESH = 1.0


class Kept:
    """The app's kept front pages, turned on, with a clock the test moves."""

    def __init__(self, app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.app = app
        self.pages = front_pages.store(app)
        self.now = 1000.0
        monkeypatch.setattr(self.pages, "fresh", FRESH)
        monkeypatch.setattr(front_pages, "clock", lambda: self.now)
        self.pages.clear()
        self.hits, self.renders = self.pages.hits, self.pages.renders

    def visitor(self) -> Any:
        """A new browser: its own cookie jar."""
        return asgi_client(self.app)

    @property
    def new_hits(self) -> int:
        return self.pages.hits - self.hits

    @property
    def new_renders(self) -> int:
        return self.pages.renders - self.renders


@pytest.fixture
def kept(clean_app, monkeypatch) -> Kept:
    return Kept(clean_app, monkeypatch)


def _front(world: Any) -> str:
    return f"/{world.org.slug}/{world.event.slug}/"


def _without_token(html: str) -> str:
    return re.sub(r'name="csrf_token" value="[^"]*"', "", html)


async def test_kept_page_needs_no_statement_and_carries_each_visitors_token(
    client, world, factory, kept, count_queries
):
    shop = await h.setup(factory, world)
    front = _front(world)
    first = await client.get(front)
    assert first.status_code == 200 and kept.new_renders == 1 and kept.new_hits == 0
    tokens = {csrf(first.text)}
    for _ in range(2):
        async with kept.visitor() as visitor:
            with count_queries() as queries:
                r = await visitor.get(front)
            assert queries.count == 0, queries.statements
            assert r.status_code == 200
            token = csrf(r.text)
            assert token not in tokens  # a visitor's own token, in every form of the page
            tokens.add(token)
            assert r.text.count(token) == r.text.count('name="csrf_token"')
            assert _without_token(r.text) == _without_token(first.text)
            assert "admit_session=" in r.headers["set-cookie"]
            assert int(r.headers["content-length"]) == len(r.content)
            assert r.headers["Content-Security-Policy"] == first.headers["Content-Security-Policy"]
            assert r.headers["X-Frame-Options"] == "DENY"
            assert r.headers["Cache-Control"] == "no-store"
            # the cart takes the token from the kept page; another visitor's is refused
            add = f"{front}cart/add"
            qty = {f"qty_{shop.ticket.id}": "1"}
            other = next(iter(tokens - {token}))
            assert (await visitor.post(add, data={"csrf_token": other, **qty})).status_code == 403
            r = await visitor.post(add, data={"csrf_token": token, **qty})
            assert r.status_code == 303, r.text
            # with a cart the visitor's own page, not the kept one
            hits = kept.new_hits
            page = await visitor.get(front)
            assert "Your cart" in page.text and "23.00" in page.text
            assert kept.new_hits == hits
    assert kept.new_hits == 2 and kept.new_renders == 1
    # the visitor who first rendered it, back without a cart, is answered from it too
    again = await client.get(front)
    assert again.status_code == 200 and "set-cookie" not in again.headers
    assert csrf(again.text) == csrf(first.text) and kept.new_hits == 3


async def test_personal_requests_are_rendered_and_not_kept(client, world, factory, kept):
    await h.setup(factory, world)
    await h.voucher(factory, world.event, "SAVE10", price_mode="subtract", value=Decimal("10"))
    front = _front(world)
    await client.get(front)
    r = await client.get(f"{front}?voucher=SAVE10")
    assert 'value="SAVE10"' in r.text and "13.00" in r.text
    assert kept.new_hits == 0 and kept.new_renders == 1
    # other query parameters show the same page: answered from it
    r = await client.get(f"{front}?utm_source=mail")
    assert r.status_code == 200 and kept.new_hits == 1
    # a language asked for is remembered: this visitor's pages are kept under it
    r = await client.get(f"{front}?lang=en")
    assert r.status_code == 200 and kept.new_hits == 1 and kept.new_renders == 1
    await client.get(front)
    assert kept.new_renders == 2
    await client.get(front)
    assert kept.new_hits == 2


async def _rename(factory: Any, shop: h.Shop) -> None:
    await _change(factory, Item, shop.ticket.id, name={"en": "VIP"})


async def _reprice(factory: Any, shop: h.Shop) -> None:
    await _change(factory, Item, shop.ticket.id, default_price=Decimal("31.50"))


async def _sell_out(factory: Any, shop: h.Shop) -> None:
    await _change(factory, Quota, shop.quota.id, size=0)


async def _close(factory: Any, shop: h.Shop) -> None:
    await _change(factory, Event, shop.event.id, settings={**shop.event.settings, "shop_open": 0})


async def _change(factory: Any, model: Any, row_id: int, **values: Any) -> None:
    """A write as the API makes it: through the ORM (which moves the catalog stamp)."""
    async with factory.sessionmaker() as session:
        row = await session.get(model, row_id)
        for name, value in values.items():
            setattr(row, name, value)
        await session.commit()


async def _update(factory: Any, statement: Any) -> None:
    async with factory.sessionmaker() as session:
        await session.execute(statement)
        await session.commit()


@pytest.mark.parametrize(
    ("change", "shown"),
    [
        (_rename, "VIP"),
        (_reprice, "31.50 EUR"),
        (_sell_out, "Sold out"),
        (_close, "The shop of this event is closed."),
    ],
)
async def test_a_change_shows_once_the_kept_page_is_older_than_the_bound(
    client, world, factory, kept, change: Callable[..., Any], shown: str
):
    shop = await h.setup(factory, world)
    front = _front(world)
    assert shown not in (await client.get(front)).text
    await change(factory, shop)
    kept.now += FRESH / 2
    assert shown not in (await client.get(front)).text  # within the bound: the kept page
    assert kept.new_hits == 1
    kept.now += FRESH  # older than the bound: rendered anew (and kept again)
    assert shown in (await client.get(front)).text
    assert kept.new_renders == 2
    async with kept.visitor() as visitor:
        assert shown in (await visitor.get(front)).text
    assert kept.new_hits == 2


async def test_sales_show_within_the_bound(client, world, factory, kept):
    shop = await h.setup(factory, world, size=1)
    front = _front(world)
    assert "Reserved by other buyers" not in (await client.get(front)).text
    assert (await h.cart(client, world, {"item": shop.ticket.id})).status_code == 201
    kept.now += 1.5 * FRESH
    assert "Reserved by other buyers" in (await client.get(front)).text


async def test_a_page_gone_is_no_longer_answered(client, world, factory, kept):
    shop = await h.setup(factory, world)
    front = _front(world)
    assert (await client.get(front)).status_code == 200
    await _update(factory, update(Event).where(Event.id == shop.event.id).values(live=False))
    kept.now += 1.5 * FRESH
    assert (await client.get(front)).status_code == 404
    assert (await client.get(front)).status_code == 404
    assert kept.pages.pages == {} and kept.pages.size == 0


async def test_each_date_of_a_series_is_kept_apart(client, world, factory, kept):
    series = await h.series(factory, world)
    front = _front(world)
    early = (await client.get(f"{front}{series.early.id}/")).text
    late = (await client.get(f"{front}{series.late.id}/")).text
    assert "30.00 EUR" in early and "30.00 EUR" not in late
    async with kept.visitor() as visitor:
        assert "30.00 EUR" in (await visitor.get(f"{front}{series.early.id}/")).text
        assert "30.00 EUR" not in (await visitor.get(f"{front}{series.late.id}/")).text
    assert kept.new_hits == 2 and kept.new_renders == 2


def test_one_visitor_renders_a_stale_page_while_the_others_get_it_for_one_more_bound():
    pages = front_pages.KeptFronts(FRESH)
    page = front_pages.Kept([b"<p>", b"</p>"], [], 1, born=10.0)
    pages.put(("", "/o/e/", None), page)
    key = ("", "/o/e/", None)
    assert pages.usable(key, 10.9) is page
    assert pages.usable(key, 11.2) is None  # this visitor renders it anew
    assert pages.usable(key, 11.3) is page  # the others meanwhile get the kept one
    assert pages.usable(key, 12.1) is None  # never older than twice the bound
    assert page.answer("tok").body == b"<p>tok</p>"
    assert pages.size == 7
    pages.put(key, front_pages.Kept([b"x" * front_pages.MAX_BYTES], [], 1, born=12.0))
    pages.put(("", "/o/f/", None), front_pages.Kept([b"<p>", b"</p>"], [], 2, born=12.0))
    assert list(pages.pages) == [("", "/o/f/", None)] and pages.size == 7  # the oldest went
    assert not front_pages.KeptFronts(0).enabled
