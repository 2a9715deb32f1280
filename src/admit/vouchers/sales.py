"""The two sales paths calling :mod:`admit.vouchers.redeem`: order creation and cart
positions. Each turns the sale's own position objects into :class:`~redeem.Want` rows and the
refusals into its own error shape, so the sales modules change by a few lines only.

Lock order everywhere: vouchers, then quotas, then seats.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.errors import FieldErrors
from admit.models import Event
from admit.orders.pricing import catalog_price
from admit.vouchers import codes, redeem
from admit.vouchers.redeem import ZERO, Rejected, Use, Want

ORDER_UNKNOWN = 'Object with code="{code}" does not exist.'
CART_UNKNOWN = "The specified voucher does not exist."


async def for_order(
    session: AsyncSession, event: Event, drafts: Sequence[Any], now: dt.datetime
) -> list[Use | None]:
    """Vouchers of a new order's positions (``orders.create.Draft``: ``data`` and ``line``).

    Attaches each use to its line (``line.voucher``) for pricing, makes add-ons of a position
    whose voucher has ``all_addons_included`` free, and checks given prices against budgets.
    Raises FieldErrors shaped ``{"positions": [...]}``.
    """
    wants = [
        Want(
            code=d.data.voucher,
            item=d.line.item,
            variation=d.line.variation,
            variation_id=d.line.variation.id if d.line.variation else None,
            subevent_id=d.line.subevent.id if d.line.subevent else None,
            seat_guid=d.data.seat,
        )
        for d in drafts
    ]
    try:
        uses = await redeem.claim(
            session, event.id, wants, now=now, unknown=ORDER_UNKNOWN, for_order=True
        )
    except Rejected as exc:
        raise FieldErrors(
            {"positions": [exc.problems.get(i, {}) for i in range(len(drafts))]}
        ) from None
    by_positionid = {d.positionid: use for d, use in zip(drafts, uses, strict=True)}
    for draft, use in zip(drafts, uses, strict=True):
        draft.line.voucher = use
        parent = by_positionid.get(draft.data.addon_to) if draft.data.addon_to else None
        if parent is not None and parent.voucher.all_addons_included and draft.line.given is None:
            draft.line.given = ZERO
    errors: list[dict[str, list[str]]] = []
    for draft, use in zip(drafts, uses, strict=True):
        line = draft.line
        problem = None
        if use is not None and line.given is not None:
            listed = catalog_price(line.item, line.variation, line.subevent)
            problem = use.given(listed, line.given)
        errors.append({"price": [problem]} if problem else {})
    if any(errors):
        raise FieldErrors({"positions": errors})
    return uses


async def for_cart(
    session: AsyncSession, event: Event, planned: Sequence[Any], now: dt.datetime
) -> None:
    """Vouchers of one cart position request (``carts.planning.Planned``: parent first, then
    add-ons and bundled). Sets ``voucher_id`` and ``quota_exempt`` on each planned position
    and, when some are exempt, locks every quota of the request. Raises FieldErrors shaped
    like the request (nested errors under ``addons`` / ``bundled``)."""
    wants = [
        Want(
            code=p.data.voucher,
            item=p.item,
            variation=None,
            variation_id=p.data.variation,
            subevent_id=p.subevent_id,
            seat_guid=p.data.seat,
        )
        for p in planned
    ]
    try:
        uses = await redeem.claim(
            session, event.id, wants, now=now, unknown=CART_UNKNOWN, for_order=False
        )
    except Rejected as exc:
        raise FieldErrors(_nested(planned, exc.problems)) from None
    for p, use in zip(planned, uses, strict=True):
        p.voucher_id = use.voucher.id if use is not None else None
        p.quota_exempt = use is not None and use.quota_exempt
    await redeem.lock_for_exempt(session, event.id, [p.key for p in planned], uses)


def _nested(planned: Sequence[Any], problems: dict[int, dict[str, list[str]]]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for index, fields in sorted(problems.items()):
        where = planned[index].where
        if where is None:
            body.update(fields)
            continue
        name, position = where
        entries = body.setdefault(name, [])
        while len(entries) <= position:
            entries.append({})
        entries[position] = fields
    return body


async def known_codes(session: AsyncSession, event_id: int, positions: Sequence[Any]) -> set[str]:
    """The lower-cased codes among the positions' ``voucher`` that exist (one query, none
    without codes), so a request reports an unknown code along with its other errors."""
    wanted = {p.voucher.lower() for p in positions if p.voucher}
    if not wanted:
        return set()
    return await codes.taken_codes(session, event_id, wanted)


async def lock_cart_batch(session: AsyncSession, event: Event, entries: Sequence[Any]) -> None:
    """``bulk_create``: the vouchers of every entry, locked before the batch locks quotas."""
    codes = [p.voucher for e in entries if hasattr(e, "addons") for p in (e, *e.addons, *e.bundled)]
    await redeem.lock_codes(session, event.id, codes)
