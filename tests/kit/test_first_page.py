"""A first page has its size written into its statement (``kit/resources/listing.py``): the
rows and count are those of the bound statement, deeper pages keep ``LIMIT``/``OFFSET`` bound
(one statement for all of them), and on PostgreSQL a connection that runs the first page
again and again plans it once (its generic plan) instead of at every execution."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from sqlalchemy import insert, text

from admit.kit.resources.listing import Listing
from admit.kit.resources.render import Rows
from admit.models import ItemCategory
from tests.factories import World


class Category(BaseModel):
    id: int
    name: dict[str, str]


LISTING = Listing(
    Rows(Category, ItemCategory),
    ItemCategory.__table__,
    ItemCategory.event_id,
    ItemCategory.id,
    None,
)


async def _categories(app: Any, event_id: int, count: int) -> list[int]:
    async with app.state.db.sessionmaker() as session:
        rows = [ItemCategory(event_id=event_id, name={"en": f"C{i}"}) for i in range(count)]
        session.add_all(rows)
        await session.commit()
        return [r.id for r in rows]


async def test_first_pages_write_their_size_deeper_pages_bind_it(
    clean_app: Any, world: World
) -> None:
    ids = await _categories(clean_app, world.event.id, 5)
    fast = clean_app.state.db.fast
    first, kept = LISTING.static_page(None, fast.native, size=2, offset=0)
    again, _ = LISTING.static_page(None, fast.native, size=2, offset=0)
    deeper, _ = LISTING.static_page(None, fast.native, size=2, offset=2)
    deepest, _ = LISTING.static_page(None, fast.native, size=2, offset=4)
    assert kept and again is first  # built once
    assert deepest is deeper and deeper is not first  # every deeper page: one statement
    sql, names = fast.compile(first)
    assert "LIMIT 2" in sql and not {"limit", "offset"} & set(names)
    assert {"limit", "offset"} <= set(fast.compile(deeper)[1])
    params = {"tenant": world.event.id, "limit": 2}
    pages = []
    async with clean_app.state.db.read_sessionmaker() as session:
        for stmt, offset in ((first, 0), (deeper, 2), (deepest, 4)):
            records = await fast.rows(session, stmt, {**params, "offset": offset})
            assert {r[-1] for r in records} == {5}  # the whole list's count on every page
            pages.append([r[0] for r in records])
    assert pages == [ids[:2], ids[2:4], ids[4:]]


async def test_postgresql_plans_a_first_page_once(clean_app: Any, world: World) -> None:
    """The first page's statement, bound by the tenant alone, is planned once per
    connection and then run on its generic plan. (Where each row costs subqueries, as the
    JSON of a page of orders does, a bound ``LIMIT`` made the generic plan look costlier
    than a plan for the values, so PostgreSQL planned it at every execution: 1.5-2.5 ms of
    its CPU a page. This small listing's generic plan was chosen either way: the test
    shows the first page's plan is kept, not that the bound one was not.)"""
    fast = clean_app.state.db.fast
    if not fast.native:
        return  # SQLite prepares no plans to keep
    async with clean_app.state.db.sessionmaker() as session:
        # More rows than a page, and statistics for them.
        rows = [{"event_id": world.event.id, "name": {"en": "C"}} for _ in range(5000)]
        await session.execute(insert(ItemCategory), rows)
        await session.commit()
        await session.execute(text("ANALYZE item_categories"))
    first, _ = LISTING.static_page(None, True, size=50, offset=0)
    sql, names = fast.compile(first)
    pool = await fast.pool()
    async with pool.acquire() as conn:
        for _ in range(8):
            records = await conn.fetch(sql, *(world.event.id for _ in names))
            assert len(records) == 50 and records[0][-1] == 5000
        generic = await conn.fetchval(
            "SELECT generic_plans FROM pg_prepared_statements WHERE statement = $1", sql
        )
    assert names == ("tenant",)
    assert generic and generic >= 1
