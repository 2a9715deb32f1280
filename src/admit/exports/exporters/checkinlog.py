"""The check-in log (``checkinlog``): every scan of the event, successful or not, in the
order it happened: when (and when it was uploaded), on which list, for which ticket, by which
device at which gate, the result and why a scan failed, and whether it was automatic or
forced offline. Filters: one list, a date range (of the scan time), successful scans only.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from admit.exports.base import ExportInput, ExportRun, add_translations, register
from admit.exports.exporters.checkin import Pk, fail_on, list_errors
from admit.exports.exporters.listing import (
    DateBound,
    ListExporter,
    TableFormat,
    bound,
    check_range,
    chunks,
    count_rows,
    event_info,
    local,
    product_namer,
    table,
)
from admit.models import (
    Checkin,
    CheckinList,
    Device,
    Gate,
    Order,
    OrderPosition,
)


class CheckinLogInput(ExportInput):
    format: TableFormat = Field(alias="_format")
    # One list only (by id); all of the event's lists when left out.
    list_id: Pk | None = Field(None, alias="list")
    date_from: DateBound = None
    date_to: DateBound = None
    successful_only: bool = False


REASONS = {
    "canceled": "Order canceled",
    "invalid": "Unknown ticket",
    "unpaid": "Ticket not paid",
    "product": "Product not allowed on this list",
    "rules": "Check-in rules not met",
    "revoked": "Ticket code revoked",
    "incomplete": "Information required",
    "already_redeemed": "Ticket already used",
    "ambiguous": "Ambiguous code",
    "error": "Technical error",
    "blocked": "Ticket blocked",
    "unapproved": "Order not approved",
    "invalid_time": "Ticket not valid at this time",
    "annulled": "Check-in annulled",
}
_Parent = aliased(OrderPosition)


@register
class CheckinLogExporter(ListExporter):
    identifier = "checkinlog"
    verbose_name = "Check-in log (all scans)"
    permission = "event.orders:read"
    Input = CheckinLogInput

    async def check_input(
        self, session: AsyncSession, event_id: int, params: Any
    ) -> dict[str, list[str]]:
        if params.list_id is None:
            return {}
        return await list_errors(session, event_id, params.list_id)

    async def write(self, run: ExportRun) -> None:
        params, session, t = run.params, run.session, run.t
        fail_on(await self.check_input(session, run.event_id, params))
        info = await event_info(session, run.event_id)
        start = bound(params.date_from, info.tz, end=False)
        end = bound(params.date_to, info.tz, end=True)
        check_range(start, end)
        query = (
            select(
                Checkin.datetime,
                Checkin.created,
                Checkin.type,
                Checkin.successful,
                Checkin.error_reason,
                Checkin.error_explanation,
                Checkin.auto_checked_in,
                Checkin.forced,
                Checkin.device_id,
                Checkin.gate_id,
                Checkin.raw_barcode,
                CheckinList.name.label("list_name"),
                OrderPosition.positionid,
                OrderPosition.item_id,
                OrderPosition.variation_id,
                OrderPosition.attendee_name_cached,
                _Parent.attendee_name_cached.label("parent_name"),
                Order.code,
                Order.invoice_address,
            )
            .select_from(Checkin)
            .join(CheckinList, CheckinList.id == Checkin.list_id)
            .outerjoin(OrderPosition, OrderPosition.id == Checkin.position_id)
            .outerjoin(Order, Order.id == OrderPosition.order_id)
            .outerjoin(_Parent, _Parent.id == OrderPosition.addon_to_id)
            .where(Checkin.event_id == run.event_id)
        )
        if params.list_id is not None:
            query = query.where(Checkin.list_id == params.list_id)
        if start is not None:
            query = query.where(Checkin.datetime >= start)
        if end is not None:
            query = query.where(Checkin.datetime < end)
        if params.successful_only:
            query = query.where(Checkin.successful.is_(True))
        query = query.order_by(Checkin.datetime, Checkin.id)
        total = await count_rows(session, query)
        products = await product_namer(session, run.event_id, run.locale)
        headers = [
            t("Date"),
            t("Upload date"),
            t("Check-in list"),
            t("Scan type"),
            t("Order code"),
            t("Position ID"),
            t("Product"),
            t("Attendee name"),
            t("Device"),
            t("Gate"),
            t("Successful"),
            t("Error reason"),
            t("Error message"),
            t("Automatically checked in"),
            t("Offline override"),
            t("Scanned code"),
        ]
        done = 0
        async with table(
            run, params.format, event_slug=info.slug, title=t("Check-in log"), headers=headers
        ) as sheet:
            async for rows in chunks(session, query):
                devices = await _names(session, Device, {r.device_id for r in rows}, run)
                gates = await _names(session, Gate, {r.gate_id for r in rows}, run)
                for r in rows:
                    name = r.attendee_name_cached or r.parent_name
                    if not name and isinstance(r.invoice_address, dict):
                        name = r.invoice_address.get("name")
                    reason = r.error_reason
                    sheet.row(
                        [
                            local(r.datetime, info.tz),
                            local(r.created, info.tz),
                            r.list_name,
                            t("Exit" if r.type == "exit" else "Entry"),
                            r.code or "",
                            r.positionid,
                            products(r.item_id, r.variation_id),
                            name or "",
                            devices.get(r.device_id, ""),
                            gates.get(r.gate_id, ""),
                            bool(r.successful),
                            t(REASONS.get(reason, reason)) if reason else "",
                            r.error_explanation or "",
                            bool(r.auto_checked_in),
                            bool(r.forced),
                            r.raw_barcode if r.positionid is None and r.raw_barcode else "",
                        ]
                    )
                done += len(rows)
                await run.progress(done, total)


async def _names(session: AsyncSession, model: Any, ids: set[Any], run: ExportRun) -> dict:
    """Names of the organizer's devices or gates among ``ids`` (one query)."""
    ids.discard(None)
    if not ids:
        return {}
    rows = await session.execute(
        select(model.id, model.name).where(
            model.id.in_(sorted(ids)), model.organizer_id == run.organizer_id
        )
    )
    return {r[0]: r[1] for r in rows}


add_translations(
    "de",
    {
        "Check-in log (all scans)": "Check-in-Protokoll (alle Scans)",
        "Check-in log": "Check-in-Protokoll",
        "Check-in list": "Check-in-Liste",
        "Position ID": "Positions-ID",
        "Attendee name": "Name des Teilnehmers",
        "Automatically checked in": "Automatisch eingecheckt",
        "Upload date": "Hochgeladen",
        "Scan type": "Scan-Typ",
        "Entry": "Eingang",
        "Exit": "Ausgang",
        "Device": "Gerät",
        "Gate": "Eingang (Gate)",
        "Successful": "Erfolgreich",
        "Error reason": "Fehlergrund",
        "Error message": "Fehlermeldung",
        "Offline override": "Offline erzwungen",
        "Scanned code": "Gescannter Code",
        "Order canceled": "Bestellung storniert",
        "Unknown ticket": "Unbekanntes Ticket",
        "Ticket not paid": "Ticket nicht bezahlt",
        "Product not allowed on this list": "Produkt auf dieser Liste nicht erlaubt",
        "Check-in rules not met": "Check-in-Regeln nicht erfüllt",
        "Ticket code revoked": "Ticket-Code widerrufen",
        "Information required": "Angaben erforderlich",
        "Ticket already used": "Ticket bereits verwendet",
        "Ambiguous code": "Mehrdeutiger Code",
        "Technical error": "Technischer Fehler",
        "Ticket blocked": "Ticket gesperrt",
        "Order not approved": "Bestellung nicht freigegeben",
        "Ticket not valid at this time": "Ticket zu dieser Zeit nicht gültig",
        "Check-in annulled": "Check-in annulliert",
    },
)
