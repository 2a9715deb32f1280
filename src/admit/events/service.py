"""Event rules: validation against the organizer's state, creation, deletion guards."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, String, and_, cast, false, func, insert, not_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.events import settings as event_settings
from admit.events.plugins import PLUGINS, SALES_CHANNELS
from admit.events.schemas import EventIn
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.resources.i18n_search import i18n_contains
from admit.models import (
    Event,
    EventMetaProperty,
    Item,
    ItemVariation,
    Organizer,
    Quota,
    team_limit_events,
)
from admit.seating import sync as seating_sync

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
    # Public keys only: the private halves never leave ``event_ticket_keys``.
    data["valid_keys"] = {k: list(v) for k, v in (event.valid_keys or {}).items()}
    return data


_COLUMNS = (
    "name slug live testmode currency date_from date_to date_admission is_public presale_start "
    "presale_end location geo_lat geo_lon has_subevents plugins seating_plan "
    "seat_category_mapping timezone item_meta_properties all_sales_channels limit_sales_channels"
).split()


async def validate_event(
    session: AsyncSession,
    organizer: Organizer,
    data: EventIn,
    event: Event | None,
    *,
    check_meta: bool = True,
) -> None:
    """``check_meta``: whether ``meta_data`` is being written (create, PUT, PATCH naming it);
    values stored before a property changed stay untouched by unrelated PATCHes."""
    errors: dict[str, list[str]] = {}
    if check_meta:
        properties = await load_meta_properties(session, organizer.id)
        meta_errors = meta_data_errors(data.meta_data, properties)
        if meta_errors:
            errors["meta_data"] = meta_errors
    if event is None and data.live:
        errors["live"] = [
            "Events cannot be created as 'live'. Quotas and payment must be added to the "
            "event before sales can go live."
        ]
    if event is not None and data.live and not event.live:
        issues = await live_issues(session, event, data)
        if issues:
            errors["live"] = issues
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
    errors.update(
        await seating_sync.assignment_errors(
            session,
            organizer.id,
            event.id if event is not None else None,
            data.seating_plan,
            data.seat_category_mapping,
            (event.seating_plan, event.seat_category_mapping) if event is not None else None,
        )
    )
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
    if event is not None:
        # The seats follow the (changed) plan in this transaction; may refuse (400) when sold
        # seats would disappear. A new event gets its seats in create_event.
        await seating_sync.sync_event(session, event, data.seating_plan, data.seat_category_mapping)


# The plugins that let a customer pay (free, gift card and box office payments need none);
# the method is on only with its setting too (``events/settings.py``), as in the reference.
PAYMENT_PLUGINS = frozenset(event_settings.PAYMENT_METHODS)
PAID_WITHOUT_PAYMENT = (
    "You have configured at least one paid product but have not enabled any payment methods."
)
NO_QUOTA = "You need to configure at least one quota to sell anything."


async def live_issues(session: AsyncSession, event: Event, data: EventIn) -> list[str]:
    """Why ``event`` cannot go live yet (the reference's rule): nothing sells without a quota,
    and paid products need a payment method: a payment plugin enabled (in the same request
    counts) with its method switched on in the settings (``payment_banktransfer__enabled``,
    ``payment_manual__enabled``)."""
    issues = []
    if not event_settings.enabled_payment_methods(event, data.plugins):
        paid_item = select(Item.id).where(Item.event_id == event.id, Item.default_price > 0)
        paid_variation = (
            select(ItemVariation.id)
            .join(Item, Item.id == ItemVariation.item_id)
            .where(Item.event_id == event.id, ItemVariation.default_price > 0)
        )
        if await session.scalar(select(paid_item.exists() | paid_variation.exists())):
            issues.append(PAID_WITHOUT_PAYMENT)
    if not await session.scalar(
        select(select(Quota.id).where(Quota.event_id == event.id).exists())
    ):
        issues.append(NO_QUOTA)
    return issues


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
    if event.seating_plan is not None:
        await seating_sync.sync_event(
            session, event, event.seating_plan, event.seat_category_mapping, force=True
        )
    return event


async def delete_event(session: AsyncSession, event: Event) -> None:
    for guard in deletion_guards:
        reason = await guard(session, event)
        if reason:
            raise APIError(403, reason)
    await session.delete(event)
    await session.flush()


ATTR_RE = re.compile(r"^attr\[(.+)\]$")


async def load_meta_properties(
    session: AsyncSession, organizer_id: int
) -> dict[str, EventMetaProperty]:
    """The organizer's meta properties by name (one query; call once per request)."""
    rows = await session.scalars(
        select(EventMetaProperty).where(EventMetaProperty.organizer_id == organizer_id)
    )
    return {p.name: p for p in rows}


def meta_data_errors(
    meta: Mapping[str, str],
    properties: Mapping[str, EventMetaProperty],
    inherited: Mapping[str, str] | None = None,
) -> list[str]:
    """What is wrong with ``meta`` (an event's or a date's ``meta_data``).

    An empty value counts as "not set". A required property is satisfied by a value here, by
    ``inherited`` (a date inherits its event's values) or by the property's default.
    """
    errors = []
    for key, value in meta.items():
        prop = properties.get(key)
        if prop is None:
            errors.append(f"Meta data property '{key}' does not exist.")
        elif value and prop.allowed_values is not None and value not in prop.allowed_values:
            errors.append(f"Meta data property '{key}' does not allow value '{value}'.")
    inherited = inherited or {}
    for name, prop in properties.items():
        if prop.required and not (meta.get(name) or inherited.get(name) or prop.default):
            errors.append(f"Meta data property '{name}' is required.")
    return errors


def attr_params(params: Mapping[str, str]) -> list[tuple[str, str]]:
    """The ``attr[key]=value`` pairs of a query string."""
    pairs = []
    for name, value in params.items():
        match = ATTR_RE.match(name)
        if match:
            pairs.append((match.group(1), value))
    return pairs


def meta_value_matches(layers: Sequence[Any], default: str, value: str) -> ColumnElement[bool]:
    """Whether the effective meta value equals ``value``.

    ``layers`` are the stored values in precedence order (a date's own, then its event's); the
    first one set (not NULL, not empty) wins, else ``default``. Every clause is NULL-safe.
    """
    clauses = []
    unset_before: list[ColumnElement[bool]] = []
    for expr in layers:
        if value != "":
            clauses.append(and_(*unset_before, expr.is_not(None), expr == value))
        unset_before.append(or_(expr.is_(None), expr == ""))
    if default == value:
        clauses.append(and_(*unset_before))
    return or_(*clauses) if clauses else false()


def meta_filters(
    params: Mapping[str, str], defaults: Mapping[str, str] | None = None
) -> list[ColumnElement[bool]]:
    """``attr[key]=value``: events whose value (or, without one, the property's default) is
    ``value``; an empty value matches events without a value whose property has no default."""
    defaults = defaults or {}
    return [
        meta_value_matches([Event.meta_data[key].as_string()], defaults.get(key, ""), value)
        for key, value in attr_params(params)
    ]


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


def search(term: str) -> ColumnElement[bool]:
    low = term.lower()
    return or_(
        func.lower(Event.slug).contains(low, autoescape=True),
        i18n_contains(Event.name, low),
        i18n_contains(Event.location, low),
    )
