"""The periodic task ``sendmail.rules``: every minute, each enabled rule of an event with the
``sendmail`` plugin sends to the recipients of its due dates (see :mod:`.schedule` for when a
rule is due and :mod:`.recipients` for who is mailed).

Each recipient's record and mail (with its delivery job, :func:`admit.mail.outbox.queue_mail`)
are written in one transaction, one rule at a time, so a crash leaves either both or neither,
and a recipient recorded once is never mailed by that rule again, whatever the rule later
becomes. A mail is written in the order's language (``subject`` and ``template`` by the
order's locale, its base language, English, or the first text there is), with the
placeholders of :mod:`.placeholders` filled in, as text and as HTML.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jinja2 import Environment, PackageLoader, StrictUndefined
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.jobs.scheduler import PeriodicTask, periodic
from admit.kit.http.transaction import commit_and_notify
from admit.mail.outbox import queue_mail
from admit.models import (
    Event,
    Order,
    OrderPosition,
    Organizer,
    SendMailRecord,
    SendMailRule,
    SubEvent,
    sendmail_rule_items,
)
from admit.orders.serialize import attendee_name
from admit.sendmail import placeholders, recipients
from admit.sendmail.recipients import Claimed
from admit.sendmail.schedule import LATE_LIMIT, base_window, event_zone, is_due, send_time
from admit.sendmail.service import has_plugin, plugin_enabled

if TYPE_CHECKING:
    from admit.config import Settings
    from admit.jobs.storage import FileStore


log = logging.getLogger("admit.sendmail")

INTERVAL_SECONDS = 60
MAX_BATCHES = 20  # per rule and run, each its own transaction; the rest waits a minute
DEFAULT_BASE_URL = "http://127.0.0.1:8000"  # without ADMIT_BASE_URL, as the CLI assumes

_html = Environment(
    loader=PackageLoader("admit.mail", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_BODY = _html.from_string(
    '{% extends "layout.html" %}{% block content %}'
    "{% for paragraph in paragraphs %}<p>"
    "{% for line in paragraph %}{{ line }}{% if not loop.last %}<br>{% endif %}{% endfor %}"
    "</p>\n{% endfor %}{% endblock %}"
)


async def send_due(
    session: AsyncSession, now: dt.datetime | None = None, *, base_url: str | None = None
) -> int:
    """One run over every enabled rule that may be due at ``now``; returns the mails queued.
    Each rule commits on its own; a rule that fails is logged and tried again next run."""
    now = now or utcnow()
    rows = await session.execute(
        select(SendMailRule.id, Event.plugins)
        .join(Event, Event.id == SendMailRule.event_id)
        .where(SendMailRule.enabled.is_(True))
        .where(
            SendMailRule.date_is_absolute.is_(False)
            | ((SendMailRule.send_date > now - LATE_LIMIT) & (SendMailRule.send_date <= now))
        )
        .order_by(SendMailRule.id)
    )
    rule_ids = [rule_id for rule_id, plugins in rows if has_plugin(plugins)]
    await session.rollback()  # read only so far: end the transaction before the rules
    sent = 0
    for rule_id in rule_ids:
        for _ in range(MAX_BATCHES):
            try:
                count = await send_rule(session, rule_id, now, base_url=base_url)
                await commit_and_notify(session)
            except Exception:
                await session.rollback()
                session.info.pop("after_commit", None)
                log.exception("scheduled e-mail rule %s failed", rule_id)
                break
            sent += count
            if count == 0:
                break
    return sent


async def send_rule(
    session: AsyncSession, rule_id: int, now: dt.datetime, *, base_url: str | None = None
) -> int:
    """Queues the mails ``rule_id`` owes at ``now``, one batch of recipients at most
    (:data:`recipients.BATCH` of each kind); returns how many."""
    rule = await session.get(SendMailRule, rule_id, populate_existing=True)
    event = await session.get(Event, rule.event_id, populate_existing=True) if rule else None
    if rule is None or event is None or not rule.enabled or not plugin_enabled(event):
        return 0
    zone = event_zone(event.timezone)
    subevents: list[int] | None = None
    if not event.has_subevents:
        if not is_due(send_time(rule, event.date_from, event.date_to, zone), now):
            return 0
    elif rule.date_is_absolute:
        if not is_due(rule.send_date, now):
            return 0  # due for every date at once: no date filter
    else:
        subevents = await _due_subevents(session, rule, event.id, zone, now)
        if not subevents:
            return 0
    products = None
    if not rule.all_products:
        products = list(
            await session.scalars(
                select(sendmail_rule_items.c.item_id).where(
                    sendmail_rule_items.c.rule_id == rule.id
                )
            )
        )
    keys: list[tuple[int, int, int]] = []
    args = (session, rule, event.id, subevents, products, now)
    if rule.send_to in ("orders", "both"):
        keys += await recipients.order_candidates(*args)
    if rule.send_to in ("attendees", "both"):
        keys += await recipients.attendee_candidates(
            *args, skip_order_address=rule.send_to == "both"
        )
    claimed = await recipients.claim(session, rule.id, keys, now)
    if claimed:
        await _queue(session, rule, event, claimed, zone, base_url or DEFAULT_BASE_URL)
    return len(claimed)


async def _due_subevents(
    session: AsyncSession, rule: SendMailRule, event_id: int, zone: dt.tzinfo, now: dt.datetime
) -> list[int]:
    lo, hi = base_window(rule, now)
    column = SubEvent.date_to if rule.offset_to_event_end else SubEvent.date_from
    near = (column >= lo) & (column <= hi)
    if rule.offset_to_event_end:  # a date without an end counts from its start
        near = near | (
            SubEvent.date_to.is_(None) & (SubEvent.date_from >= lo) & (SubEvent.date_from <= hi)
        )
    rows = await session.execute(
        select(SubEvent.id, SubEvent.date_from, SubEvent.date_to)
        .where(SubEvent.event_id == event_id, near)
        .order_by(SubEvent.id)
    )
    return [sid for sid, start, end in rows if is_due(send_time(rule, start, end, zone), now)]


@dataclass(frozen=True)
class _Common:
    """What every mail of one rule run shares."""

    rule: SendMailRule
    event: Event
    organizer: str
    organizer_slug: str
    zone: dt.tzinfo
    base_url: str
    starts: dict[int, dt.datetime]


async def _queue(
    session: AsyncSession,
    rule: SendMailRule,
    event: Event,
    claimed: Sequence[Claimed],
    zone: dt.tzinfo,
    base_url: str,
) -> None:
    order_ids = {c.order_id for c in claimed}
    orders = {o.id: o for o in await session.scalars(select(Order).where(Order.id.in_(order_ids)))}
    tickets: dict[int, list[OrderPosition]] = {}
    for position in await session.scalars(
        select(OrderPosition)
        .where(OrderPosition.order_id.in_(order_ids), OrderPosition.canceled.is_(False))
        .order_by(OrderPosition.order_id, OrderPosition.positionid)
    ):
        tickets.setdefault(position.order_id, []).append(position)
    starts = {0: event.date_from}
    dates = {c.subevent_id for c in claimed} - {0}
    if dates:
        starts.update(
            (sid, start)
            for sid, start in await session.execute(
                select(SubEvent.id, SubEvent.date_from).where(SubEvent.id.in_(dates))
            )
        )
    organizer = await session.get(Organizer, event.organizer_id)
    common = _Common(
        rule,
        event,
        organizer.name if organizer else "",
        organizer.slug if organizer else "",
        zone,
        base_url,
        starts,
    )
    links = []
    for item in claimed:
        order = orders[item.order_id]
        own = tickets.get(order.id, [])
        position = next((p for p in own if p.id == item.position_id), None)
        mail_id = await _mail(session, common, order, own, position, item.subevent_id)
        links.append({"id": item.record_id, "mail_id": mail_id})
    await session.execute(update(SendMailRecord), links)


async def _mail(
    session: AsyncSession,
    common: _Common,
    order: Order,
    tickets: Sequence[OrderPosition],
    position: OrderPosition | None,
    subevent_id: int,
) -> int:
    event, locale = common.event, order.locale
    start = common.starts.get(subevent_id, event.date_from)
    values = {
        "event": placeholders.pick(event.name, locale, event.slug),
        "event_slug": event.slug,
        "order": order.code,
        "order_email": order.email or "",
        "name": _name(order, tickets, position),
        "url": f"{common.base_url.rstrip('/')}/{common.organizer_slug}/{event.slug}/order/"
        f"{order.code}/{order.secret}/",
        "date": start.astimezone(common.zone).strftime("%Y-%m-%d %H:%M %Z").strip(),
        "organizer": common.organizer,
    }
    subject = placeholders.render(placeholders.pick(common.rule.subject, locale), values)
    subject = " ".join(subject.split())  # one line: a value cannot start new headers
    text = placeholders.render(placeholders.pick(common.rule.template, locale), values)
    paragraphs = [block.splitlines() for block in text.replace("\r\n", "\n").split("\n\n")]
    html = _BODY.render(subject=subject, paragraphs=[p for p in paragraphs if p])
    address = position.attendee_email if position is not None else order.email
    mail = await queue_mail(
        session,
        to=[address or ""],
        subject=subject[:998],
        body=text,
        html=html,
        organizer_id=event.organizer_id,
        event_id=event.id,
        order_id=order.id,
        position_id=position.id if position is not None else None,
    )
    return mail.id


def _name(order: Order, tickets: Sequence[OrderPosition], position: OrderPosition | None) -> str:
    """The attendee's name for a ticket's mail; else the invoice name, else the first
    attendee name of the order."""
    if position is not None:
        name = position.attendee_name_cached or attendee_name(position.attendee_name_parts)
        if name:
            return name
    address = order.invoice_address or {}
    name = address.get("name") or attendee_name(address.get("name_parts"))
    if name:
        return str(name)
    for ticket in tickets:
        name = ticket.attendee_name_cached or attendee_name(ticket.attendee_name_parts)
        if name:
            return name
    return ""


@periodic
def _periodic_tasks(settings: Settings, store: FileStore) -> list[PeriodicTask]:
    return [
        PeriodicTask(
            "sendmail.rules",
            INTERVAL_SECONDS,
            functools.partial(send_due, base_url=settings.base_url),
        )
    ]
