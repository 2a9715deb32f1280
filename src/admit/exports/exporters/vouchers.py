"""All vouchers of an event (``voucherlist``) with every field of the voucher resource: code,
usages, validity, what it applies to (product, variation, quota, date, seat), its price effect,
tag, comment, the quota and add-on flags and the budget.

Vouchers are read in id order through one cursor; per chunk the quotas, dates and seats they
name are loaded in one query each. A value is money (with the currency's places) when the
price mode sets or subtracts an amount, a percentage for ``percent``, blank for ``none``.
Optional filter: ``tag``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.exports.base import ExportInput, ExportRun, add_translations, register
from admit.exports.exporters.listing import (
    ListExporter,
    TableFormat,
    chunks,
    count_rows,
    event_info,
    local,
    localized,
    money,
    product_namer,
    table,
)
from admit.models import Quota, SubEvent, Voucher
from admit.vouchers import seats

PRICE_MODES = {
    "none": "No effect",
    "set": "Set product price to",
    "subtract": "Subtract from product price",
    "percent": "Reduce product price by (%)",
}


class VoucherListInput(ExportInput):
    format: TableFormat = Field(alias="_format")
    # Only vouchers with this tag (exact match).
    tag: str | None = Field(None, max_length=255)


async def _by_id(session: AsyncSession, columns: tuple[Any, ...], ids: set[Any]) -> dict:
    ids.discard(None)
    if not ids:
        return {}
    rows = await session.execute(select(*columns).where(columns[0].in_(sorted(ids))))
    return {r[0]: r for r in rows}


@register
class VoucherListExporter(ListExporter):
    identifier = "voucherlist"
    verbose_name = "Vouchers"
    permission = "event.vouchers:read"
    Input = VoucherListInput

    async def write(self, run: ExportRun) -> None:
        session, t, params = run.session, run.t, run.params
        info = await event_info(session, run.event_id)
        products = await product_namer(session, run.event_id, run.locale)
        query = select(*Voucher.__table__.columns).where(Voucher.event_id == run.event_id)
        if params.tag is not None:
            query = query.where(Voucher.tag == params.tag)
        query = query.order_by(Voucher.id)
        total = await count_rows(session, query)
        headers = [
            t("Voucher code"),
            t("Created"),
            t("Valid until"),
            t("Maximum usages"),
            t("Minimum usages"),
            t("Redeemed"),
            t("Product"),
            t("Variation"),
            t("Quota"),
            t("Date"),
            t("Seat"),
            t("Reserve ticket from quota"),
            t("Allow to bypass quota"),
            t("Price mode"),
            t("Voucher value"),
            t("Tag"),
            t("Comment"),
            t("Shows hidden products"),
            t("All add-ons included"),
            t("All bundled products included"),
            t("Budget"),
            t("Budget used"),
            t("Voucher ID"),
        ]
        done = 0
        async with table(
            run, params.format, event_slug=info.slug, title=t("Vouchers"), headers=headers
        ) as sheet:
            async for vouchers in chunks(session, query):
                guids = await seats.guids(session, (v.seat_id for v in vouchers))
                quotas = await _by_id(
                    session, (Quota.id, Quota.name), {v.quota_id for v in vouchers}
                )
                dates = await _by_id(
                    session,
                    (SubEvent.id, SubEvent.name, SubEvent.date_from),
                    {v.subevent_id for v in vouchers},
                )
                for v in vouchers:
                    date = dates.get(v.subevent_id)
                    when = ""
                    if date is not None:
                        start = local(date.date_from, info.tz)
                        when = f"{localized(date.name, run.locale)} ({start:%Y-%m-%d %H:%M})"
                    if v.price_mode in ("set", "subtract"):
                        value: Any = money(v.value, info.places)
                    elif v.price_mode == "percent":
                        value = v.value
                    else:
                        value = None
                    sheet.row(
                        [
                            v.code,
                            local(v.created, info.tz),
                            local(v.valid_until, info.tz),
                            v.max_usages,
                            v.min_usages,
                            v.redeemed,
                            products.items.get(v.item_id, "") if v.item_id else "",
                            products.variations.get(v.variation_id, "") if v.variation_id else "",
                            quotas[v.quota_id].name if v.quota_id in quotas else "",
                            when,
                            guids.get(v.seat_id or 0, ""),
                            v.block_quota,
                            v.allow_ignore_quota,
                            t(PRICE_MODES.get(v.price_mode, v.price_mode)),
                            value,
                            v.tag,
                            v.comment,
                            v.show_hidden_items,
                            v.all_addons_included,
                            v.all_bundles_included,
                            money(v.budget, info.places),
                            money(v.budget_used, info.places),
                            v.id,
                        ]
                    )
                done += len(vouchers)
                await run.progress(done, total)


add_translations(
    "de",
    {
        "Vouchers": "Gutscheine",
        "Voucher code": "Gutscheincode",
        "Created": "Erstellt",
        "Valid until": "Gültig bis",
        "Maximum usages": "Maximale Verwendungen",
        "Minimum usages": "Minimale Verwendungen",
        "Redeemed": "Eingelöst",
        "Quota": "Kontingent",
        "Reserve ticket from quota": "Ticket aus Kontingent reservieren",
        "Allow to bypass quota": "Kontingent ignorieren erlauben",
        "Price mode": "Preiseffekt",
        "Voucher value": "Gutscheinwert",
        "Tag": "Tag",
        "Shows hidden products": "Zeigt versteckte Produkte",
        "All add-ons included": "Alle Zusatzprodukte inklusive",
        "All bundled products included": "Alle Bundle-Produkte inklusive",
        "Budget": "Budget",
        "Budget used": "Verbrauchtes Budget",
        "Voucher ID": "Gutschein-ID",
        "No effect": "Keine Auswirkung",
        "Set product price to": "Produktpreis setzen auf",
        "Subtract from product price": "Vom Produktpreis abziehen",
        "Reduce product price by (%)": "Produktpreis reduzieren um (%)",
    },
)
