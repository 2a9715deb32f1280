"""Vouchers written as JSON by PostgreSQL (``kit/resources/sql_json.py``): ``rows.py``'s
declaration with its money as the schema writes it (``"12.50"``). Nothing is bound per
request; ``tests/vouchers/test_voucher_sql_json.py`` holds both paths to the same bytes."""

from __future__ import annotations

from typing import Any

from admit.kit.resources.sql_json import JsonShape, decimal_json
from admit.models import Voucher
from admit.vouchers.rows import VOUCHER_ROWS


def _money(column: Any) -> Any:
    return lambda _flags: decimal_json(column)


VOUCHER_SHAPE = JsonShape(
    VOUCHER_ROWS,
    fields={
        "value": _money(Voucher.value),
        "budget": _money(Voucher.budget),
        "budget_used": _money(Voucher.budget_used),
    },
)
