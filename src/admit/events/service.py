"""Event rules: validation against the organizer's state, creation, deletion guards."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from sqlalchemy import ColumnElement, String, and_, cast, func, insert, not_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import GenericFunction

from admit.db import utcnow
from admit.events.plugins import PLUGINS, SALES_CHANNELS
from admit.events.schemas import EventIn
from admit.kit.errors import APIError, FieldErrors
from admit.models import Event, Organizer, team_limit_events

# Checks that refuse deleting an event (e.g. "it has orders"); packages that own such data
# register one here, so events need not import them.
DeletionGuard = Callable[[AsyncSession, Event], Awaitable[str | None]]
deletion_guards: list[DeletionGuard] = []


def event_to_read(event: Event, base_url: str, organizer_slug: str) -> dict[str, Any]:
    data = {c: getattr(event, c) for c in _COLUMNS}
    data["meta_data"] = dict(event.meta_data or {})
    data["sales_channels"] = (
        list(SALES_CHANNELS) if event.all_sales_channels else list(event.limit_sales_channels)
    )
    data["public_url"] = f"{base_url}/{organizer_slug}/{event.slug}/"
    data["valid_keys"] = {}
    return data


_COLUMNS = (
    "name slug live testmode currency date_from date_to date_admission is_public presale_start "
    "presale_end location geo_lat geo_lon has_subevents plugins seating_plan "
    "seat_category_mapping timezone item_meta_properties all_sales_channels limit_sales_channels"
).split()


async def validate_event(
    session: AsyncSession, organizer: Organizer, data: EventIn, event: Event | None
) -> None:
    errors: dict[str, list[str]] = {}
    if event is None and data.live:
        errors["live"] = [
            "Events cannot be created as 'live'. Quotas and payment must be added to the "
            "event before sales can go live."
        ]
    if event is not None and data.slug != event.slug:
        errors["slug"] = ["The event slug cannot be changed."]
    if event is not None and data.has_subevents != event.has_subevents:
        errors["has_subevents"] = [
            "Once created, an event cannot change between a series and a single event."
        ]
    if data.date_to is not None and data.date_to < data.date_from:
        errors["date_to"] = ["The end of the event has to be later than its start."]
    if data.presale_start and data.presale_end and data.presale_end < data.presale_start:
        errors["presale_end"] = ["The end of the presale period has to be later than its start."]
    enabled = set(organizer.plugins or ())
    for plugin in data.plugins:
        if plugin not in PLUGINS:
            errors.setdefault("plugins", []).append(f'Unknown plugin: "{plugin}".')
        elif plugin not in enabled:
            errors.setdefault("plugins", []).append(
                f'The plugin "{plugin}" is not enabled for this organizer.'
            )
    if data.seating_plan is not None:
        errors["seating_plan"] = [f'Invalid pk "{data.seating_plan}" - object does not exist.']
    if data.seat_category_mapping and data.seating_plan is None:
        errors["seat_category_mapping"] = ["A seat category mapping needs a seating plan."]
    if event is None and not errors:
        taken = await session.scalar(
            select(func.count())
            .select_from(Event)
            .where(
                Event.organizer_id == organizer.id,
                func.lower(Event.slug) == data.slug.lower(),
            )
        )
        if taken:
            errors["slug"] = ["This slug has already been used for a different event."]
    if errors:
        raise FieldErrors(errors)


def apply_event(event: Event, data: EventIn, supplied: set[str]) -> None:
    values = data.model_dump(exclude={"sales_channels"})
    if (
        "sales_channels" in supplied
        and data.sales_channels is not None
        and not ({"all_sales_channels", "limit_sales_channels"} & supplied)
    ):
        # The deprecated field, when it is all a client sends, sets the limit.
        channels = data.sales_channels
        values["all_sales_channels"] = set(channels) >= set(SALES_CHANNELS)
        values["limit_sales_channels"] = [] if values["all_sales_channels"] else channels
    values["plugins"] = list(dict.fromkeys(values["plugins"]))
    for key, value in values.items():
        setattr(event, key, value)


async def create_event(
    session: AsyncSession,
    organizer: Organizer,
    data: EventIn,
    team_id: int | None,
    team_all_events: bool,
) -> Event:
    event = Event(organizer_id=organizer.id)
    apply_event(event, data, set(data.model_fields_set))
    session.add(event)
    await session.flush()
    if team_id is not None and not team_all_events:
        # A token whose team is limited to some events can see what it just created.
        await session.execute(insert(team_limit_events).values(team_id=team_id, event_id=event.id))
    return event


async def delete_event(session: AsyncSession, event: Event) -> None:
    for guard in deletion_guards:
        reason = await guard(session, event)
        if reason:
            raise APIError(403, reason)
    await session.delete(event)
    await session.flush()


ATTR_RE = re.compile(r"^attr\[(.+)\]$")


def meta_filters(params: Mapping[str, str]) -> list[ColumnElement[bool]]:
    """``attr[key]=value``: events with that meta value; an empty value matches no value."""
    clauses = []
    for name, value in params.items():
        match = ATTR_RE.match(name)
        if not match:
            continue
        expr = Event.meta_data[match.group(1)].as_string()
        if value == "":
            clauses.append(or_(expr.is_(None), expr == ""))
        else:
            clauses.append(expr == value)
    return clauses


# Each branch states whether date_to is set, so the clause is never SQL NULL and its negation
# (``not_``) keeps events without an end instead of dropping them by three-valued logic.
def _in_future(now: dt.datetime) -> ColumnElement[bool]:
    return or_(
        and_(Event.date_to.is_not(None), Event.date_to >= now),
        and_(Event.date_to.is_(None), Event.date_from >= now),
    )


def _in_past(now: dt.datetime) -> ColumnElement[bool]:
    return or_(
        and_(Event.date_to.is_not(None), Event.date_to < now),
        and_(Event.date_to.is_(None), Event.date_from < now),
    )


def is_future(value: bool) -> ColumnElement[bool]:
    """Event series are never "future" and always "not future", as the reference."""
    now = utcnow()
    if value:
        return and_(Event.has_subevents.is_(False), _in_future(now))
    return or_(Event.has_subevents.is_(True), not_(_in_future(now)))


def is_past(value: bool) -> ColumnElement[bool]:
    now = utcnow()
    if value:
        return and_(Event.has_subevents.is_(False), _in_past(now))
    return or_(Event.has_subevents.is_(True), not_(_in_past(now)))


def ends_after(value: dt.datetime) -> ColumnElement[bool]:
    return and_(
        Event.has_subevents.is_(False),
        or_(Event.date_to >= value, and_(Event.date_to.is_(None), Event.date_from >= value)),
    )


def in_sales_channel(channel: str) -> ColumnElement[bool]:
    if channel not in SALES_CHANNELS:
        raise ValueError(f'"{channel}" is not a valid choice.')
    return or_(
        Event.all_sales_channels.is_(True),
        cast(Event.limit_sales_channels, String).contains(f'"{channel}"'),
    )


class json_each_text(GenericFunction[Any]):
    """The (key, value) rows of a JSON object: ``json_each`` on SQLite, ``jsonb_each_text`` on
    PostgreSQL. Anything but an object (SQL NULL, JSON null) gives no rows on either."""

    name = "json_each_text"
    inherit_cache = True


@compiles(json_each_text, "sqlite")
def _json_each_sqlite(element: json_each_text, compiler: Any, **kw: Any) -> str:
    arg = compiler.process(element.clauses, **kw)
    return f"json_each(CASE WHEN json_type({arg}) = 'object' THEN {arg} END)"


@compiles(json_each_text, "postgresql")
def _json_each_postgresql(element: json_each_text, compiler: Any, **kw: Any) -> str:
    arg = compiler.process(element.clauses, **kw)
    return f"jsonb_each_text(CASE WHEN jsonb_typeof({arg}) = 'object' THEN {arg} END)"


def _i18n_contains(column: Any, low: str) -> ColumnElement[bool]:
    """Whether any translation of a multi-lingual text contains ``low`` (keys do not count)."""
    values = json_each_text(column).table_valued("value")
    return (
        select(values.c.value)
        .where(func.lower(values.c.value).contains(low, autoescape=True))
        .exists()
    )


def search(term: str) -> ColumnElement[bool]:
    low = term.lower()
    return or_(
        func.lower(Event.slug).contains(low, autoescape=True),
        _i18n_contains(Event.name, low),
        _i18n_contains(Event.location, low),
    )
