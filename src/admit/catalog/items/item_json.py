"""Items (with variations, add-ons and bundles) written as JSON by PostgreSQL
(``kit/resources/sql_json.py``): the declarations of ``rows.py`` with the SQL of what their
``finish`` functions compute.

Each expression mirrors one step of ``_finish_item`` / ``_finish_variation`` (named beside
it), so both paths give the same bytes; ``tests/catalog/test_item_sql_json.py`` compares them
over a rich catalog. The request's values are bound parameters: the public base URL
(``j_base``, for pictures) and the event's declared item meta properties as JSON text
(``j_meta``, the defaults ``meta_out`` starts from).
"""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import (
    ColumnElement,
    Text,
    bindparam,
    case,
    cast,
    exists,
    func,
    literal_column,
    select,
)
from sqlalchemy.dialects.postgresql import JSONB, aggregate_order_by

from admit.catalog.items.rows import _RATE, ADDON_ROWS, BUNDLE_ROWS, ITEM_ROWS, VARIATION_ROWS
from admit.events.plugins import SALES_CHANNELS
from admit.kit.resources.sql_json import (
    Flags,
    JsonShape,
    compact_json,
    concat,
    decimal_json,
    json_or_empty,
    json_string,
    sorted_object,
    sql_text,
)
from admit.models import Item, ItemBundle, ItemVariation
from admit.uploads.service import MEDIA_PREFIX

BASE = bindparam("j_base", type_=Text)
DECLARED = cast(bindparam("j_meta", type_=Text), JSONB)
_EMPTY_OBJECT = literal_column("'{}'::jsonb", JSONB)
_NOTHING = sql_text("")
_ALL_CHANNELS = sql_text(orjson.dumps(list(SALES_CHANNELS)).decode())


def _money(column: Any) -> Any:
    return lambda _flags: decimal_json(column)


def _object(expr: ColumnElement[Any]) -> ColumnElement[Any]:
    """A stored JSONB object, ``{}`` for anything else (``layer or {}``)."""
    return case((func.jsonb_typeof(expr) == "object", expr), else_=_EMPTY_OBJECT)


def _meta(*layers: Any) -> Any:
    """``meta_out``: the declared defaults overlaid with each stored layer, sorted by key."""
    merged = _object(DECLARED)
    for layer in layers:
        merged = merged.op("||")(_object(layer))
    return lambda _flags: sorted_object(merged)


def _channels(model: Any) -> dict[str, Any]:
    """``_channels``: the stored limit (``[]`` when falsy), every channel when not limited."""
    limit = json_or_empty(model.limit_sales_channels, "[]")
    return {
        "limit_sales_channels": lambda _f: limit,
        "sales_channels": lambda _f: case((model.all_sales_channels, _ALL_CHANNELS), else_=limit),
    }


# -- variations (``_finish_variation``), add-ons, bundles -------------------------------------

VARIATION_SHAPE = JsonShape(
    VARIATION_ROWS,
    fields={
        "default_price": _money(ItemVariation.default_price),
        "price": _money(func.coalesce(ItemVariation.default_price, Item.default_price)),
        "original_price": _money(ItemVariation.original_price),
        "free_price_suggestion": _money(ItemVariation.free_price_suggestion),
        **_channels(ItemVariation),
        # The item's stored meta data (not finished), then the variation's.
        "meta_data": _meta(Item.meta_data, ItemVariation.meta_data),
    },
)
ADDON_SHAPE = JsonShape(ADDON_ROWS)
BUNDLE_SHAPE = JsonShape(
    BUNDLE_ROWS, fields={"designated_price": _money(ItemBundle.designated_price)}
)


# -- items (``_finish_item``) -------------------------------------------------------------------


def _picture(_flags: Flags) -> ColumnElement[str]:
    """``media_url``: the used upload's public URL, null without one."""
    url = concat(BASE, sql_text(f"{MEDIA_PREFIX}/"), Item.picture)
    return case(
        (func.coalesce(Item.picture, _NOTHING) == _NOTHING, sql_text("null")),
        else_=json_string(url),
    )


def _program_times(_flags: Flags) -> ColumnElement[str]:
    """``public_slots``: each stored slot's start and end, in their order."""
    stored = Item.program_times
    slots = case(
        (func.jsonb_typeof(stored) == "array", stored), else_=literal_column("'[]'::jsonb")
    )
    each = func.jsonb_array_elements(slots).table_valued("value", with_ordinality="n")
    each = each.render_derived()
    slot = concat(
        sql_text('{"start":'),
        compact_json(each.c.value.op("->")("start")),
        sql_text(',"end":'),
        compact_json(each.c.value.op("->")("end")),
        sql_text("}"),
    )
    joined = func.string_agg(slot, aggregate_order_by(sql_text(","), each.c.n))
    inner = select(joined).select_from(each).scalar_subquery()
    return concat(sql_text("["), func.coalesce(inner, sql_text("")), sql_text("]"))


_HAS_VARIATIONS = exists().where(ItemVariation.item_id == Item.id)

ITEM_SHAPE = JsonShape(
    ITEM_ROWS,
    fields={
        "internal_name": lambda _f: json_string(func.nullif(Item.internal_name, _NOTHING)),
        "default_price": _money(Item.default_price),
        "tax_rate": _money(func.coalesce(_RATE, 0)),
        "free_price_suggestion": _money(Item.free_price_suggestion),
        "original_price": _money(Item.original_price),
        "picture": _picture,
        **_channels(Item),
        "meta_data": _meta(Item.meta_data),
        "has_variations": lambda _f: case(
            (_HAS_VARIATIONS, sql_text("true")), else_=sql_text("false")
        ),
        "program_times": _program_times,
    },
    children=(VARIATION_SHAPE, ADDON_SHAPE, BUNDLE_SHAPE),
)


def item_params(base_url: str, declared: Any) -> dict[str, Any]:
    """The request's values ``ITEM_SHAPE`` binds."""
    return {"j_base": base_url, "j_meta": orjson.dumps(declared or {}).decode()}
