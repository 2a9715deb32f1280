"""Buyers change attendee names, e-mails and answers on their order page, where the event lets
them: a pending or paid order, until ``last_order_modification_date`` (none: always), and not
once a ticket was checked in unless ``allow_modifications_after_checkin`` (the reference's
rules and keys).

The form's values are checked as at checkout (names and e-mails required by the event,
required questions, dependent questions shown only for the answer they depend on, hidden ones
dropped) and each answer as the API's position PATCH checks it (``check_answers``); the
change is then written as that PATCH writes it, with its ``service.event.order.modified``
notification and the order-changed hooks. A file question shows the file the order holds; a
new file (checked and kept as at checkout, ``file_answers``) replaces it, and the replaced
upload expires like an unused one.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.questions.answers import AnswerIn, check_answers, load_questions, to_models
from admit.db import utcnow
from admit.events.settings import value
from admit.kit.resources.i18n import localized
from admit.models import Answer, Event, Item, Order, OrderPosition, Question, UploadedFile
from admit.models.checkin import Checkin
from admit.notifications.notify import notify_all
from admit.orders import hooks
from admit.orders.schemas import EMAIL_RE
from admit.orders.serialize import attendee_name
from admit.shop import dependencies, file_answers, questions
from admit.shop.file_answers import FileAnswer
from admit.shop.settings import MODIFY_AFTER_CHECKIN, MODIFY_UNTIL
from admit.uploads.service import LIFETIME, upload_by_path
from admit.web.forms import Pairs, every, first

MODIFIED = "service.event.order.modified"
REQUIRED = "This field is required."
CLOSED = "This order can no longer be changed."
CHECKED_IN = "A ticket of this order has been used for entry: it can no longer be changed here."


@dataclass
class Editable:
    """One position's part of the form."""

    position: OrderPosition
    title: str
    attendee: bool
    asked: list[Question]
    described: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Form:
    positions: list[Editable]
    names_asked: bool
    names_required: bool
    emails_asked: bool
    emails_required: bool

    @property
    def anything(self) -> bool:
        return any(
            e.described or (e.attendee and (self.names_asked or self.emails_asked))
            for e in self.positions
        )


def deadline(event: Event) -> dt.datetime | None:
    raw = value(event, MODIFY_UNTIL)
    if not raw:
        return None
    when = dt.datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


async def refusal(session: AsyncSession, event: Event, order: Order) -> str | None:
    """Why the buyer may not change the order now, as a sentence; None when they may."""
    if order.status not in ("n", "p"):
        return CLOSED
    until = deadline(event)
    if until is not None and utcnow() > until:
        return f"Changes were possible until {until:%Y-%m-%d %H:%M} UTC; that date has passed."
    if not value(event, MODIFY_AFTER_CHECKIN):
        ids = [p.id for p in order.positions]
        used = await session.scalar(
            select(Checkin.id)
            .where(
                Checkin.position_id.in_(ids),
                Checkin.successful.is_(True),
                Checkin.type == "entry",
            )
            .limit(1)
        )
        if ids and used is not None:
            return CHECKED_IN
    return None


async def form(session: AsyncSession, event: Event, order: Order, locale: str) -> Form:
    """What the order's form asks, per position that is not canceled."""
    live = sorted((p for p in order.positions if not p.canceled), key=lambda p: p.positionid)
    ids = {p.item_id for p in live}
    items = (
        {i.id: i for i in await session.scalars(select(Item).where(Item.id.in_(ids)))}
        if ids
        else {}
    )
    loaded = await questions.load(session, event)
    found = []
    for p in live:
        item = items.get(p.item_id)
        mine = [(q, its) for q, its in loaded if p.item_id in its]
        editable = Editable(
            p,
            localized(item.name, locale) if item else "",
            bool(item is not None and (item.admission or p.addon_to_id is None)),
            [q for q, _ in mine],
        )
        links = questions.dependency_fields(editable.asked, f"q_{p.id}_")
        for q, its in mine:
            described = questions.describe(q, its, locale)
            described["depends"] = links.get(q.id)
            editable.described.append(described)
        found.append(editable)
    names = bool(value(event, "attendee_names_asked"))
    emails = bool(value(event, "attendee_emails_asked"))
    return Form(
        found,
        names,
        names and bool(value(event, "attendee_names_required")),
        emails,
        emails and bool(value(event, "attendee_emails_required")),
    )


def current(data: Form) -> dict[str, list[str]]:
    """The form's fields filled with what the order holds now."""
    kept: dict[str, list[str]] = {}
    for e in data.positions:
        p = e.position
        kept[f"name_{p.id}"] = [p.attendee_name_cached or ""]
        kept[f"email_{p.id}"] = [p.attendee_email or ""]
        for a in p.answers:
            name = f"q_{p.id}_{a.question_id}"
            kept[name] = [str(o.id) for o in a.options] if a.options else [a.answer]
    return kept


def current_files(data: Form) -> dict[str, str]:
    """The names of the files the order's answers hold, by the form's field."""
    return {
        f"q_{e.position.id}_{a.question_id}": a.file.split("/", 1)[-1]
        for e in data.positions
        for a in e.position.answers
        if a.file
    }


def file_fields(data: Form) -> list[tuple[Editable, int, str]]:
    """The form's file questions: (position, question id, field name)."""
    return [
        (e, q["id"], f"q_{e.position.id}_{q['id']}")
        for e in data.positions
        for q in e.described
        if q["type"] == "F"
    ]


def _answers(pairs: Pairs, e: Editable) -> list[AnswerIn]:
    found = []
    for q in e.described:
        if q["type"] == "F":
            continue
        name = f"q_{e.position.id}_{q['id']}"
        if q["type"] in ("C", "M"):
            chosen = [int(v) for v in every(pairs, name) if v.isdigit() and len(v) < 10]
            if chosen:
                found.append(AnswerIn(question=q["id"], options=chosen))
        elif q["type"] == "B":
            found.append(
                AnswerIn(question=q["id"], answer="True" if first(pairs, name) else "False")
            )
        elif first(pairs, name).strip():
            found.append(AnswerIn(question=q["id"], answer=first(pairs, name).strip()[:5000]))
    return found


def _messages(problems: dict[str, Any]) -> str:
    return " ".join(str(m) for ms in problems.values() for m in ms)


async def save(
    session: AsyncSession,
    event: Event,
    order: Order,
    data: Form,
    pairs: Pairs,
    files: dict[str, UploadedFile] | None = None,
    base_url: str = "",
) -> dict[str, str]:
    """Checks the posted form and, when it holds, writes it; the errors by field otherwise
    (then nothing is written). ``files``: the new files by field (stored, not yet used)."""
    files = files or {}
    errors: dict[str, str] = {}
    changes: list[tuple[Editable, str | None, str | None, list[Any]]] = []
    for e in data.positions:
        pid = e.position.id
        name = first(pairs, f"name_{pid}").strip()[:255] or None
        email = first(pairs, f"email_{pid}").strip()[:254] or None
        if e.attendee and data.names_required and not name:
            errors[f"name_{pid}"] = REQUIRED
        if e.attendee and data.emails_required and not email:
            errors[f"email_{pid}"] = REQUIRED
        elif email and not EMAIL_RE.match(email):
            errors[f"email_{pid}"] = "Enter a valid email address."
        given = _answers(pairs, e)
        asked = [q for q in e.asked if q.type != "F"]
        visible = dependencies.shown(e.asked, given)
        given = [
            a for a in given if a.question in visible and (a.options or (a.answer or "").strip())
        ]
        answered = {a.question for a in given}
        held = {a.question_id for a in e.position.answers if a.file}
        for q in asked:
            if q.required and q.id in visible and q.id not in answered:
                errors[f"q_{pid}_{q.id}"] = REQUIRED
        for q in e.asked:
            field_name = f"q_{pid}_{q.id}"
            if q.type == "F" and q.required and q.id in visible:
                if q.id not in held and field_name not in files:
                    errors[field_name] = REQUIRED
        infos = await load_questions(session, event.id, answered)
        checked, problems = check_answers(given, e.position.item_id, infos)
        for a, problem in zip(given, problems or [], strict=False):
            if problem:
                errors[f"q_{pid}_{a.question}"] = _messages(problem)
        changes.append((e, name, email, checked))
    if errors:
        return errors
    changed = False
    for e, name, email, checked in changes:
        changed = _write(session, e, data, name, email) or changed
        changed = await _write_answers(session, e, checked) or changed
    for e, question_id, field_name in file_fields(data):
        if field_name in files:
            await _replace_file(session, e, question_id, files[field_name], base_url)
            changed = True
    if changed:
        order.last_modified = utcnow()
        hooks.changed(session, order)  # a name on an invoice line may have changed
        await session.flush()
        await notify_all(
            session, [MODIFIED], organizer_id=event.organizer_id, event_id=event.id, code=order.code
        )
    return {}


def _write(
    session: AsyncSession, e: Editable, data: Form, name: str | None, email: str | None
) -> bool:
    p = e.position
    changed = False
    if e.attendee and data.names_asked and name != (p.attendee_name_cached or None):
        p.attendee_name_parts = {"_legacy": name} if name else {}
        p.attendee_name_cached = attendee_name(p.attendee_name_parts)
        changed = True
    if e.attendee and data.emails_asked and email != (p.attendee_email or None):
        p.attendee_email = email
        changed = True
    return changed


def _shape(question_id: int, answer: str, options: list[Any]) -> tuple[int, str, tuple[int, ...]]:
    return question_id, answer, tuple(sorted(o.id for o in options))


async def _write_answers(session: AsyncSession, e: Editable, checked: list[Any]) -> bool:
    p = e.position
    files = {q.id for q in e.asked if q.type == "F"}
    before = {
        _shape(a.question_id, a.answer, a.options) for a in p.answers if a.question_id not in files
    }
    after = {_shape(c.question.id, c.answer, c.options) for c in checked}
    if before == after:
        return False
    await session.execute(
        delete(Answer).where(
            Answer.orderposition_id == p.id, Answer.question_id.not_in(files or {0})
        )
    )
    for answer in to_models(checked):
        answer.orderposition_id = p.id
        session.add(answer)
    return True


async def _replace_file(
    session: AsyncSession, e: Editable, question_id: int, upload: UploadedFile, base_url: str
) -> None:
    """The position's answer to a file question: the new file; the old one's upload expires
    as an unused one does (nothing links it any more)."""
    p = e.position
    for old in [a for a in p.answers if a.question_id == question_id]:
        if old.file:
            replaced = await upload_by_path(session, old.file)
            if replaced is not None:
                replaced.expires = utcnow() + LIFETIME
        await session.delete(old)
    await session.flush()
    await file_answers.attach(session, base_url, p.id, [FileAnswer(question_id, upload)])
