"""Quota availabilities (``quotalist``, the reference's identifier): every quota of the event
with its size, products, what paid and pending orders, blocking vouchers, carts and exited
tickets take, the waiting list, and what is left now.

The numbers come from :func:`admit.quotas.availability.count`, the count every sale is checked
against, so the file says exactly what the shop would answer. The counters other packages
contribute (blocking vouchers, exits, the waiting list) are registered by their route modules;
a worker process that never imported those registers them here.

Permission: ``event.orders:read``, as for the reference, whose quota export asks for nothing
beyond the order-viewing permission every exporter needs: the counts are order data (sold,
pending, in carts), and ``event.items:write`` (changing the catalog) would shut out the
read-only staff who run sales reports.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.exports.base import ExportInput, ExportRun, add_translations, register
from admit.exports.exporters.listing import (
    ListExporter,
    TableFormat,
    event_info,
    local,
    localized,
    table,
)
from admit.models import Quota, SubEvent
from admit.quotas import availability

# Quotas counted per round: each costs a few statements (see availability.count).
ROUND = 100


class QuotaListInput(ExportInput):
    format: TableFormat = Field(alias="_format")


def _register_counters() -> None:
    from admit.checkin import exits
    from admit.vouchers import blocking
    from admit.waitinglist import service as waiting

    if "blocking_vouchers" not in availability.blocking_counters:
        blocking.register()
    if "exited_orders" not in availability.blocking_counters:
        exits.register()
    if "waiting_list" not in availability.informational_counters:
        waiting.register()


def _products(quota: Quota, locale: str) -> str:
    """``Item`` for a whole item, ``Item - Variation`` for each variation it counts."""
    chosen: dict[int, list[str]] = {}
    for variation in quota.variations:
        chosen.setdefault(variation.item_id, []).append(localized(variation.value, locale))
    names = []
    for item in quota.items:
        name = localized(item.name, locale)
        if chosen.get(item.id):
            names += [f"{name} – {v}" for v in chosen[item.id]]
        else:
            names.append(name)
    return ", ".join(names)


async def _dates(session: AsyncSession, quotas: list[Quota]) -> dict[int, Any]:
    ids = sorted({q.subevent_id for q in quotas if q.subevent_id is not None})
    if not ids:
        return {}
    rows = await session.execute(
        select(SubEvent.id, SubEvent.name, SubEvent.date_from, SubEvent.date_to).where(
            SubEvent.id.in_(ids)
        )
    )
    return {r.id: r for r in rows}


@register
class QuotaListExporter(ListExporter):
    identifier = "quotalist"
    verbose_name = "Quota availabilities"
    permission = "event.orders:read"
    Input = QuotaListInput

    async def write(self, run: ExportRun) -> None:
        _register_counters()
        session, t = run.session, run.t
        info = await event_info(session, run.event_id)
        ids = list(
            await session.scalars(
                select(Quota.id)
                .where(Quota.event_id == run.event_id)
                .order_by(Quota.subevent_id, Quota.position, Quota.id)
            )
        )
        order = {quota_id: n for n, quota_id in enumerate(ids)}
        headers = [
            t("Quota ID"),
            t("Quota name"),
            t("Products"),
            t("Total quota"),
            t("Paid orders"),
            t("Pending orders"),
            t("Blocking vouchers"),
            t("Current user's carts"),
            t("Waiting list"),
            t("Exited orders"),
            t("Current availability"),
            t("Available"),
            t("Closed"),
        ]
        if info.has_subevents:
            headers += [t("Date"), t("Start date"), t("End date")]
        infinite = t("Infinite")
        async with table(
            run, run.params.format, event_slug=info.slug, title=t("Quotas"), headers=headers
        ) as sheet:
            for start in range(0, len(ids), ROUND):
                quotas = list(
                    await session.scalars(
                        select(Quota)
                        .where(Quota.id.in_(ids[start : start + ROUND]))
                        .options(selectinload(Quota.items), selectinload(Quota.variations))
                    )
                )
                quotas.sort(key=lambda q: order[q.id])
                numbers = await availability.count(session, quotas)
                dates = await _dates(session, quotas)
                for quota in quotas:
                    n = numbers[quota.id]
                    row: list[Any] = [
                        quota.id,
                        quota.name,
                        _products(quota, run.locale),
                        infinite if quota.size is None else quota.size,
                        n.paid_orders,
                        n.pending_orders,
                        n.blocking_vouchers,
                        n.cart_positions,
                        n.waiting_list,
                        n.exited_orders,
                        infinite if n.available_number is None else n.available_number,
                        n.available,
                        quota.closed,
                    ]
                    if info.has_subevents:
                        date = dates.get(quota.subevent_id or 0)
                        row += (
                            [
                                localized(date.name, run.locale),
                                local(date.date_from, info.tz),
                                local(date.date_to, info.tz),
                            ]
                            if date
                            else ["", None, None]
                        )
                    sheet.row(row)
                await run.progress(min(start + ROUND, len(ids)), len(ids))


add_translations(
    "de",
    {
        "Quota availabilities": "Kontingent-Verfügbarkeiten",
        "Quotas": "Kontingente",
        "Quota ID": "Kontingent-ID",
        "Quota name": "Name des Kontingents",
        "Products": "Produkte",
        "Total quota": "Gesamtkontingent",
        "Paid orders": "Bezahlte Bestellungen",
        "Pending orders": "Offene Bestellungen",
        "Blocking vouchers": "Blockierende Gutscheine",
        "Current user's carts": "Aktuelle Warenkörbe",
        "Waiting list": "Warteliste",
        "Exited orders": "Ausgecheckte Tickets",
        "Current availability": "Aktuelle Verfügbarkeit",
        "Available": "Verfügbar",
        "Closed": "Geschlossen",
    },
)
