"""``kit/resources/render.py`` and ``kit/resources/listing.py`` on their own: children and
grandchildren, kinds
loaded only on request, probes, the count in the page's statement, values as JSON shows
them; the same rows whichever way the children come (inline on the native pool, a statement
per kind through the session), on both databases."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel

from admit.kit.idempotency.store import in_session
from admit.kit.lanes.fastread import FastReader
from admit.kit.resources.listing import Listing, fetcher
from admit.kit.resources.render import Nested, Rows
from admit.kit.resources.schema import Money
from admit.models import Item, ItemCategory, ItemVariation, quota_items
from tests.factories import World

WHEN = dt.datetime(2030, 1, 2, 3, 4, 5, 678901, tzinfo=dt.UTC)


class VariationRow(BaseModel):
    id: int
    value: dict[str, str]
    default_price: Money | None
    available_from: dt.datetime | None


class ItemRow(BaseModel):
    id: int
    name: dict[str, str]
    default_price: Money
    category: int | None
    variations: list[VariationRow]
    quotas: list[int]
    label: str


class CategoryRow(BaseModel):
    id: int
    name: dict[str, str]
    items: list[ItemRow] | None


def _label(row: dict[str, Any], parent: dict[str, Any] | None, extra: Mapping[str, Any]) -> None:
    # A child sees its parent's selected values; the request's extra reaches every level.
    assert parent is not None and parent["id"] == row["category"]
    row["label"] = f"{extra['prefix']}{parent['name']['en']}/{row['name']['en']}"


VARIATIONS = Rows(VariationRow, ItemVariation)
ITEMS = Rows(
    ItemRow,
    Item,
    computed=("label",),
    children=(
        Nested.of(Item.variations, VARIATIONS),
        Nested(
            "quotas",
            quota_items.c.item_id,
            Item.id,
            value=quota_items.c.quota_id,
            order_by=(quota_items.c.quota_id,),
            probe=True,
        ),
    ),
    finish=_label,
)
CATEGORIES = Rows(
    CategoryRow,
    ItemCategory,
    children=(
        Nested(
            "items",
            Item.category_id,
            ItemCategory.id,
            rows=ITEMS,
            order_by=(Item.id,),
            when=lambda extra: extra["with_items"],
        ),
    ),
)
LISTING = Listing(CATEGORIES, ItemCategory.__table__, ItemCategory.event_id, ItemCategory.id, None)


async def _catalog(session: Any, event_id: int) -> list[int]:
    cats = [
        ItemCategory(event_id=event_id, name={"en": "Empty"}),
        ItemCategory(event_id=event_id, name={"en": "Full", "de": "Voll"}),
    ]
    session.add_all(cats)
    await session.flush()
    shirt = Item(event_id=event_id, category_id=cats[1].id, name={"en": "Shirt"})
    shirt.default_price = Decimal("12.5")
    shirt.variations = [
        ItemVariation(value={"en": "S"}, position=2),
        ItemVariation(
            value={"en": "M"}, position=1, default_price=Decimal("3"), available_from=WHEN
        ),
    ]
    cap = Item(event_id=event_id, category_id=cats[1].id, name={"en": "Cap"})
    cap.default_price = Decimal("0")
    session.add_all([shirt, cap])
    await session.flush()
    return [c.id for c in cats]


def _readers(fast: FastReader) -> list[FastReader]:
    """Both ways children come on PostgreSQL; SQLite has only the session's."""
    return [fast, in_session(fast)] if fast.native else [fast]


@pytest.mark.parametrize("with_items", [True, False])
async def test_children_and_grandchildren_render_as_declared(
    clean_app: Any, world: World, with_items: bool
) -> None:
    db = clean_app.state.db
    async with db.sessionmaker() as session:
        ids = await _catalog(session, world.event.id)
        await session.commit()
    extra = {"with_items": with_items, "prefix": ">"}
    for reader in _readers(db.fast):
        async with db.read_sessionmaker() as session:
            stmt, _ = LISTING.static_page(None, reader.native)
            params = {"tenant": world.event.id, "limit": 50, "offset": 0}
            records = await reader.rows(session, stmt, params)
            assert [r[-1] for r in records] == [2, 2]  # the count, in the page's statement
            rows = await CATEGORIES.render(fetcher(reader, session), reader.native, records, extra)
        empty, full = rows
        assert list(empty) == ["id", "name", "items"]  # the schema's order, nothing hidden
        assert empty == {"id": ids[0], "name": {"en": "Empty"}, "items": [] if with_items else None}
        assert full["name"] == {"en": "Full", "de": "Voll"}
        if not with_items:
            assert full["items"] is None  # not loaded: left to ``finish``
            continue
        shirt, cap = full["items"]
        assert shirt["default_price"] == "12.50" and cap["default_price"] == "0.00"
        assert shirt["label"] == ">Full/Shirt" and cap["quotas"] == []
        medium, small = shirt["variations"]  # the relationship's order: position, id
        assert medium["value"] == {"en": "M"} and medium["default_price"] == "3.00"
        assert medium["available_from"] == WHEN  # orjson writes it as Pydantic does
        assert small["default_price"] is None and small["available_from"] is None
        assert cap["variations"] == []
        ItemRow.model_validate(shirt)  # every field there, of its type


async def test_an_empty_page_and_a_detail(clean_app: Any, world: World) -> None:
    db = clean_app.state.db
    async with db.sessionmaker() as session:
        ids = await _catalog(session, world.event.id)
        await session.commit()
    for reader in _readers(db.fast):
        async with db.read_sessionmaker() as session:
            stmt, _ = LISTING.static_page(None, reader.native)
            params = {"tenant": world.other_event.id, "limit": 50, "offset": 0}
            assert await reader.rows(session, stmt, params) == []  # another tenant's: none
            detail = LISTING.static_detail(reader.native)
            params = {"tenant": world.event.id, "pk": ids[1]}
            [record] = await reader.rows(session, detail, params)
            extra = {"with_items": True, "prefix": ""}
            fetch = fetcher(reader, session)
            [row] = await CATEGORIES.render(fetch, reader.native, [record], extra)
            assert [i["name"] for i in row["items"]] == [{"en": "Shirt"}, {"en": "Cap"}]
            params = {"tenant": world.other_event.id, "pk": ids[1]}
            assert await reader.rows(session, detail, params) == []


def test_a_declaration_must_cover_its_schema() -> None:
    with pytest.raises(ValueError, match="label: no column"):
        Rows(ItemRow, Item, children=ITEMS.children)
    with pytest.raises(ValueError, match="not in the schema"):
        Rows(VariationRow, ItemVariation, columns={"price": ItemVariation.default_price})
