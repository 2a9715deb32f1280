"""Gift card exports of an organizer: the cards it issued (``giftcardlist``) and their
transactions (``giftcardtransactionlist``), the reference's identifiers.

Both live at organizer level (cards span events) and need ``organizer.giftcards:read``, checked
again here at run time whatever events the organizer has. Times are in the ``timezone`` input
(default UTC); values carry their card's currency places. ``giftcardlist`` may show the value
at an earlier moment (``date``: the sum of the transactions up to then, cards issued by then);
``giftcardtransactionlist`` may be limited to a date range.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import Field
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from admit.auth.owners import organizer_permission
from admit.catalog.taxes.compute import currency_places
from admit.exports.base import (
    ORGANIZER,
    ExportInput,
    ExportRun,
    add_translations,
    register,
)
from admit.exports.exporters.listing import (
    DateBound,
    ListExporter,
    TableFormat,
    TimeZoneName,
    bound,
    check_range,
    chunks,
    count_rows,
    local,
    money,
    table,
    zone,
)
from admit.jobs.queue import JobFailed
from admit.models import Event, GiftCard, GiftCardTransaction, Order, OrderPosition, Organizer

PERMISSION = "organizer.giftcards:read"


def _allowed(run: ExportRun) -> None:
    if not organizer_permission(run.principal, run.organizer_id, PERMISSION):
        raise JobFailed("You no longer have permission to export this organizer's gift cards.")


class GiftCardListInput(ExportInput):
    format: TableFormat = Field(alias="_format")
    timezone: TimeZoneName = "UTC"
    # Only test-mode cards ("yes") or only live ones ("no"); all when left out.
    testmode: Literal["yes", "no"] | None = None
    # The values as they were at this moment (a day: its end), of the cards issued by then.
    date: DateBound = None


async def _tickets(session: AsyncSession, ids: set[Any]) -> dict[int, Any]:
    """Order code, position number and event slug of the tickets with these ids."""
    ids.discard(None)
    if not ids:
        return {}
    rows = await session.execute(
        select(OrderPosition.id, OrderPosition.positionid, Order.code, Event.slug)
        .join(Order, Order.id == OrderPosition.order_id)
        .join(Event, Event.id == Order.event_id)
        .where(OrderPosition.id.in_(sorted(ids)))
    )
    return {r.id: r for r in rows}


@register
class GiftCardListExporter(ListExporter):
    identifier = "giftcardlist"
    verbose_name = "Gift cards"
    level = ORGANIZER
    permission = PERMISSION
    Input = GiftCardListInput

    async def write(self, run: ExportRun) -> None:
        _allowed(run)
        session, t, params = run.session, run.t, run.params
        tz = zone(params.timezone)
        value: Any = GiftCard.value
        query = select(
            GiftCard.id,
            GiftCard.secret,
            GiftCard.testmode,
            GiftCard.issuance,
            GiftCard.expires,
            GiftCard.conditions,
            GiftCard.currency,
            GiftCard.owner_ticket_id,
            GiftCard.issued_in_id,
        ).where(GiftCard.issuer_id == run.organizer_id)
        if params.date is not None:
            cutoff = bound(params.date, tz, end=True)
            if isinstance(params.date, dt.datetime):
                cutoff += dt.timedelta(microseconds=1)  # the moment itself counts
            value = (
                select(func.coalesce(func.sum(GiftCardTransaction.value), 0))
                .where(
                    GiftCardTransaction.card_id == GiftCard.id,
                    GiftCardTransaction.datetime < cutoff,
                )
                .correlate(GiftCard)
                .scalar_subquery()
            )
            query = query.where(GiftCard.issuance < cutoff)
        query = query.add_columns(value.label("value"))
        if params.testmode is not None:
            query = query.where(GiftCard.testmode.is_(params.testmode == "yes"))
        query = query.order_by(GiftCard.issuance, GiftCard.id)
        total = await count_rows(session, query)
        headers = [
            t("Gift card code"),
            t("Test mode"),
            t("Creation date"),
            t("Expiry date"),
            t("Special terms and conditions"),
            t("Currency"),
            t("Current value"),
            t("Created in order"),
            t("Event"),
            t("Owned by ticket"),
            t("Gift card ID"),
        ]
        done = 0
        async with table(
            run, params.format, event_slug=None, title=t("Gift cards"), headers=headers
        ) as sheet:
            async for cards in chunks(session, query):
                tickets = await _tickets(
                    session, {c.owner_ticket_id for c in cards} | {c.issued_in_id for c in cards}
                )
                for c in cards:
                    issued_in = tickets.get(c.issued_in_id)
                    owner = tickets.get(c.owner_ticket_id)
                    sheet.row(
                        [
                            c.secret,
                            c.testmode,
                            local(c.issuance, tz),
                            local(c.expires, tz),
                            c.conditions or "",
                            c.currency,
                            money(c.value, currency_places(c.currency)),
                            issued_in.code if issued_in else "",
                            issued_in.slug if issued_in else "",
                            f"{owner.code}-{owner.positionid}" if owner else "",
                            c.id,
                        ]
                    )
                done += len(cards)
                await run.progress(done, total)


class GiftCardTransactionListInput(ExportInput):
    format: TableFormat = Field(alias="_format")
    timezone: TimeZoneName = "UTC"
    date_from: DateBound = None
    date_to: DateBound = None


@register
class GiftCardTransactionListExporter(ListExporter):
    identifier = "giftcardtransactionlist"
    verbose_name = "Gift card transactions"
    level = ORGANIZER
    permission = PERMISSION
    Input = GiftCardTransactionListInput

    async def write(self, run: ExportRun) -> None:
        _allowed(run)
        session, t, params = run.session, run.t, run.params
        tz = zone(params.timezone)
        start = bound(params.date_from, tz, end=False)
        end = bound(params.date_to, tz, end=True)
        check_range(start, end)
        acceptor = aliased(Organizer)
        query = (
            select(
                GiftCardTransaction.id,
                GiftCardTransaction.datetime,
                GiftCardTransaction.value,
                GiftCardTransaction.text,
                GiftCard.id.label("card_id"),
                GiftCard.secret,
                GiftCard.testmode,
                GiftCard.currency,
                Order.code,
                Event.slug.label("event"),
                acceptor.slug.label("acceptor"),
            )
            .join(GiftCard, GiftCard.id == GiftCardTransaction.card_id)
            .outerjoin(Order, Order.id == GiftCardTransaction.order_id)
            .outerjoin(Event, Event.id == Order.event_id)
            .outerjoin(acceptor, acceptor.id == GiftCardTransaction.acceptor_id)
            .where(GiftCard.issuer_id == run.organizer_id)
        )
        if start is not None:
            query = query.where(GiftCardTransaction.datetime >= start)
        if end is not None:
            query = query.where(GiftCardTransaction.datetime < end)
        query = query.order_by(GiftCardTransaction.datetime, GiftCardTransaction.id)
        total = await count_rows(session, query)
        headers = [
            t("Date"),
            t("Gift card code"),
            t("Test mode"),
            t("Amount"),
            t("Currency"),
            t("Order code"),
            t("Event"),
            t("Text"),
            t("Accepted by"),
            t("Transaction ID"),
            t("Gift card ID"),
        ]
        done = 0
        async with table(
            run, params.format, event_slug=None, title=t("Gift card transactions"), headers=headers
        ) as sheet:
            async for rows in chunks(session, query):
                for r in rows:
                    sheet.row(
                        [
                            local(r.datetime, tz),
                            r.secret,
                            r.testmode,
                            money(r.value, currency_places(r.currency)),
                            r.currency,
                            r.code or "",
                            r.event or "",
                            r.text or "",
                            r.acceptor or "",
                            r.id,
                            r.card_id,
                        ]
                    )
                done += len(rows)
                await run.progress(done, total)


add_translations(
    "de",
    {
        "Gift cards": "Geschenkgutscheine",
        "Gift card transactions": "Geschenkgutschein-Transaktionen",
        "Gift card code": "Geschenkgutschein-Code",
        "Creation date": "Erstellungsdatum",
        "Expiry date": "Ablaufdatum",
        "Special terms and conditions": "Besondere Bedingungen",
        "Current value": "Aktueller Wert",
        "Amount": "Betrag",
        "Created in order": "Erstellt in Bestellung",
        "Owned by ticket": "Gehört zu Ticket",
        "Gift card ID": "Geschenkgutschein-ID",
        "Text": "Text",
        "Accepted by": "Akzeptiert von",
        "Transaction ID": "Transaktions-ID",
    },
)
