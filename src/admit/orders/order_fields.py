"""Order and position fields kept for clients of the reference: ``api_meta`` (free data of API
clients), ``plugin_data`` (data of plugins; read-only), ``custom_followup_at`` (a date to look
at the order again), ``tax_rounding_mode`` and the positions' ``print_logs``.

Only line-by-line tax rounding is computed here: an order asking for one of the reference's
sum-based modes is refused (400) rather than stored with totals it does not describe.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.errors import FieldErrors
from admit.models import Device, Order, OrderPosition, PrintLog

ROUNDING_MODES = ("line", "sum_by_net", "sum_by_net_only_business", "sum_by_net_keep_gross")
SUPPORTED_ROUNDING = "line"
API_META_MAX = 64 * 1024  # characters of JSON: client bookkeeping, not a document store


def _date_text(value: Any) -> Any:
    """ISO dates as text only (pydantic would also take numbers as timestamps)."""
    if isinstance(value, dt.date) or (isinstance(value, str) and len(value) == 10):
        return value
    raise ValueError("Date has wrong format. Use one of these formats instead: YYYY-MM-DD.")


Date = Annotated[dt.date, BeforeValidator(_date_text)]


def _meta_size(value: dict[str, Any]) -> dict[str, Any]:
    if len(json.dumps(value)) > API_META_MAX:
        raise ValueError(f"Ensure this object has no more than {API_META_MAX} characters.")
    return value


ApiMeta = Annotated[dict[str, Any], AfterValidator(_meta_size)]


def rounding_error(mode: str | None) -> str | None:
    if mode is None or mode == SUPPORTED_ROUNDING:
        return None
    return f'The tax rounding mode "{mode}" is not supported; only "line" is.'


def check_create(data: Any) -> None:
    """400 for what an order create asks that is not done here (a sum-based rounding)."""
    problem = rounding_error(data.tax_rounding_mode)
    if problem:
        raise FieldErrors.single("tax_rounding_mode", problem)


def order_fields(order: Order) -> dict[str, Any]:
    followup = order.custom_followup_at
    return {
        "api_meta": dict(order.api_meta or {}),
        "plugin_data": dict(order.plugin_data or {}),
        "custom_followup_at": followup.isoformat() if followup else None,
        "tax_rounding_mode": order.tax_rounding_mode or SUPPORTED_ROUNDING,
    }


def print_log_dict(log: PrintLog, device_number: int | None) -> dict[str, Any]:
    return {
        "id": log.id,
        "datetime": log.datetime.isoformat().replace("+00:00", "Z"),
        "source": log.source,
        "type": log.type,
        "device_id": device_number,
        "info": dict(log.info or {}),
    }


async def position_print_logs(
    session: AsyncSession, positions: Iterable[OrderPosition]
) -> dict[int, list[dict[str, Any]]]:
    """The print logs of many positions in one query; none when no position was printed (the
    common case costs no query)."""
    ids = sorted({p.id for p in positions if p.has_print_logs})
    if not ids:
        return {}
    rows = await session.execute(
        select(PrintLog, Device.device_id)
        .outerjoin(Device, Device.id == PrintLog.device_id)
        .where(PrintLog.position_id.in_(ids))
        .order_by(PrintLog.datetime, PrintLog.id)
    )
    found: dict[int, list[dict[str, Any]]] = {}
    for log, number in rows:
        found.setdefault(log.position_id, []).append(print_log_dict(log, number))
    return found


def position_fields(
    pos: OrderPosition, print_logs: dict[int, list[dict[str, Any]]] | None
) -> dict[str, Any]:
    """``plugin_data`` may be missing on check-in snapshots (plain rows, not ORM objects)."""
    return {
        "plugin_data": dict(getattr(pos, "plugin_data", None) or {}),
        "print_logs": list((print_logs or {}).get(pos.id, ())),
    }
