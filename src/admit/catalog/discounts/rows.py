"""How discounts render for GETs (see ``kit/resources/render.py``): the same JSON as
``discount_to_read`` through ``DiscountOut``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from admit.catalog.discounts.schemas import DiscountOut
from admit.events.plugins import SALES_CHANNELS
from admit.kit.resources.render import Nested, Rows
from admit.models import Discount

_ALL_CHANNELS = list(SALES_CHANNELS)


def _finish(row: dict[str, Any], _parent: Any, _extra: Mapping[str, Any]) -> None:
    limit = row["limit_sales_channels"]
    row["sales_channels"] = list(_ALL_CHANNELS) if row["all_sales_channels"] else list(limit)


DISCOUNT_ROWS = Rows(
    DiscountOut,
    Discount,
    computed=("sales_channels",),
    children=(
        Nested.of(Discount.condition_limit_products, probe=True),
        Nested.of(Discount.benefit_limit_products, probe=True),
    ),
    finish=_finish,
)
