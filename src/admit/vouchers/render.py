"""The voucher as the API shows it (the seat as its guid), for any number of vouchers in a
fixed number of queries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Voucher
from admit.vouchers import seats
from admit.vouchers.schemas import VoucherOut


def _to_dict(voucher: Voucher, guid: str | None) -> dict[str, Any]:
    return {
        "id": voucher.id,
        "created": voucher.created,
        "code": voucher.code,
        "max_usages": voucher.max_usages,
        "redeemed": voucher.redeemed,
        "min_usages": voucher.min_usages,
        "valid_until": voucher.valid_until,
        "block_quota": voucher.block_quota,
        "allow_ignore_quota": voucher.allow_ignore_quota,
        "price_mode": voucher.price_mode,
        "value": voucher.value,
        "item": voucher.item_id,
        "variation": voucher.variation_id,
        "quota": voucher.quota_id,
        "seat": guid,
        "tag": voucher.tag,
        "comment": voucher.comment,
        "subevent": voucher.subevent_id,
        "show_hidden_items": voucher.show_hidden_items,
        "all_addons_included": voucher.all_addons_included,
        "all_bundles_included": voucher.all_bundles_included,
        "budget": voucher.budget,
        "budget_used": voucher.budget_used,
    }


async def render(session: AsyncSession, vouchers: Sequence[Voucher]) -> list[dict[str, Any]]:
    """Vouchers as the API shows them (one extra query when some name a seat)."""
    by_seat = await seats.guids(session, (v.seat_id for v in vouchers))
    return [
        VoucherOut.model_validate(_to_dict(v, by_seat.get(v.seat_id))).model_dump(mode="json")  # type: ignore[arg-type]
        for v in vouchers
    ]


async def render_by_id(session: AsyncSession, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    rows = (await session.scalars(select(Voucher).where(Voucher.id.in_(list(ids))))).all()
    return {body["id"]: body for body in await render(session, rows)}
