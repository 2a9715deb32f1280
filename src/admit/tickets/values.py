"""The values of a ticket's variables: every name in :mod:`admit.tickets.variables`.

Multi-lingual texts are printed in the order's locale (then its base language, English, any);
dates and times in the event's time zone (a series date's own dates and location for a
position of a series); money with the currency's decimal places (``EUR 23.00``, ``JPY 500``).
Answers are ``question_<identifier>``: choice answers in the order's language, booleans as
Yes/No, file answers not at all (a file cannot be printed as text).
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from decimal import Decimal
from typing import Any

from admit.catalog.taxes.compute import currency_places
from admit.kit.resources.i18n import localized
from admit.seating.render import seat_name
from admit.tickets.loading import Batch, PositionData
from admit.tickets.variables import QUESTION_PREFIX, TEXT_VARIABLES

DATE = "%Y-%m-%d"
TIME = "%H:%M"
DATETIME = f"{DATE} {TIME}"


def _zone(name: str | None) -> dt.tzinfo:
    try:
        return zoneinfo.ZoneInfo(name or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def _local(moment: dt.datetime | None, zone: dt.tzinfo, fmt: str) -> str:
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(zone).strftime(fmt)


def money(amount: Decimal | None, currency: str) -> str:
    if amount is None:
        return ""
    places = currency_places(currency)
    return f"{currency} {Decimal(amount):.{places}f}"


def _date_range(start: dt.datetime, end: dt.datetime | None, zone: dt.tzinfo) -> str:
    first = _local(start, zone, DATE)
    last = _local(end, zone, DATE) if end else first
    return first if last == first else f"{first} – {last}"


def _itemvar(item: Any, variation: Any, locale: str) -> str:
    name = localized(item.name, locale)
    if variation is not None:
        return f"{name} – {localized(variation.value, locale)}"
    return name


def _address(data: PositionData) -> str:
    pos = data.position
    city = " ".join(p for p in (pos.zipcode, pos.city) if p)
    lines = [pos.street, city, pos.state, pos.country]
    return "\n".join(line for line in lines if line)


def _answer_text(answer: Any, locale: str) -> str:
    if answer.type in ("C", "M") and answer.options:
        return ", ".join(localized(option, locale) for option in answer.options)
    if answer.type == "B":
        return {"True": "Yes", "False": "No"}.get(answer.answer, answer.answer)
    if answer.type == "F":
        return ""
    return answer.answer


def ticket_values(batch: Batch, data: PositionData) -> dict[str, str]:
    """Every variable's value for one position's ticket (each name of ``TEXT_VARIABLES``,
    plus ``question_<identifier>`` for each answer)."""
    event, pos, order = batch.event, data.position, data.order
    locale = order.locale or "en"
    zone = _zone(event.timezone)
    date = data.subevent or event  # a date of a series has its own name, dates and location
    currency = event.currency or "EUR"
    name = pos.attendee_name_cached or data.parent_name or ""
    addons = [_itemvar(item, variation, locale) for item, variation in data.addons]
    values = {
        "event_name": localized(date.name, locale),
        "event_date": _local(date.date_from, zone, DATE),
        "event_date_range": _date_range(date.date_from, date.date_to, zone),
        "event_begin": _local(date.date_from, zone, DATETIME),
        "event_begin_time": _local(date.date_from, zone, TIME),
        "event_end": _local(date.date_to, zone, DATETIME),
        "event_admission": _local(date.date_admission, zone, DATETIME),
        "event_admission_time": _local(date.date_admission, zone, TIME),
        "event_location": localized(date.location, locale),
        "organizer": batch.organizer_name,
        "order": order.code,
        "order_email": order.email or "",
        "order_date": _local(order.datetime, zone, DATE),
        "order_total": money(order.total, currency),
        "positionid": str(pos.positionid),
        "attendee_name": name,
        "attendee_email": pos.attendee_email or "",
        "attendee_company": pos.company or "",
        "attendee_address": _address(data),
        "item": localized(data.item.name, locale),
        "variation": localized(data.variation.value, locale) if data.variation else "",
        "itemvar": _itemvar(data.item, data.variation, locale),
        "price": money(pos.price, currency),
        "seat": seat_name(data.seat) if data.seat else "",
        "addons": "\n".join(addons),
        "secret": pos.secret,
        "pseudonymization_id": pos.pseudonymization_id or "",
    }
    for missing in TEXT_VARIABLES.keys() - values.keys():  # a name added to the shared list
        values[missing] = ""
    for answer in data.answers:
        values[f"{QUESTION_PREFIX}{answer.identifier}"] = _answer_text(answer, locale)
    return values
