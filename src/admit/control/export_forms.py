"""An exporter's form, generated from its descriptor's ``input_parameters`` (name, required,
choices): a choice is a select, and the exporter's input model tells the rest of the widget
(a yes/no is a checkbox, a date a date field, a number stays text); the few parameters that
name the event's objects (``list``, ``questions``, ``events``) choose among them by name.
The form's texts go to the API as typed; its validation says what is wrong with them."""

from __future__ import annotations

import datetime as dt
import typing
from typing import Any

from sqlalchemy import select

from admit.control.fields import Field, as_id, to_body
from admit.control.render import text_of
from admit.kit.http.context import EventContext, OrgContext
from admit.models import CheckinList, Event, Question
from admit.web.forms import Pairs

CHOICE_LABELS = {
    "xlsx": "Excel (.xlsx)", "csv": "CSV (comma)", "default": "CSV (comma)",
    "semicolon": "CSV (semicolon)", "pdf": "PDF", "yes": "yes", "no": "no",
    "name": "name", "code": "order code", "last_checked_in": "last check-in",
}  # fmt: skip
PART_LABELS = {"orders": "Orders", "positions": "Tickets", "fees": "Fees"}
LABELS = {
    "_format": "File format", "list": "Check-in list", "questions": "Questions (columns)",
    "events": "Events", "date_from": "From", "date_to": "Until", "date": "On the day",
    "sort": "Sorted by", "paid_only": "Paid orders only", "tag": "Tag",
    "include_payment_amounts": "With payment amounts",
    "group_multiple_choice": "Several choices in one column", "attention_only":
    "Only tickets needing attention", "secrets": "With ticket codes",
    "successful_only": "Successful scans only", "timezone": "Time zone",
    "testmode": "Test mode cards",
}  # fmt: skip
INTEGERS = {"list"}
INTEGER_LISTS = {"questions"}


def _choice_label(value: str) -> str:
    part, _, fmt = value.partition(":")
    if fmt:
        return f"{PART_LABELS.get(part, part)}, {CHOICE_LABELS.get(fmt, fmt)}"
    return CHOICE_LABELS.get(value, value)


def _model_field(level: str, identifier: str, name: str) -> Any:
    """The exporter's input model's field of that name (its type and default)."""
    from admit.exports.lookup import find

    exporter = find(level, identifier)
    if exporter is None:
        return None
    for key, info in exporter.Input.model_fields.items():
        if (info.alias or key) == name:
            return info
    return None


def _kinds(annotation: Any) -> set[Any]:
    """The plain types inside an annotation (``date | None`` -> {date, NoneType})."""
    args = typing.get_args(annotation)
    if not args or typing.get_origin(annotation) is typing.Literal:
        return {typing.get_origin(annotation) or annotation}
    out: set[Any] = set()
    for arg in args:
        if typing.get_origin(arg) is typing.Annotated:
            arg = typing.get_args(arg)[0]
        out |= _kinds(arg) if typing.get_args(arg) else {typing.get_origin(arg) or arg}
    if typing.get_origin(annotation) in (list, set):
        out.add(list)
    return out


async def named_choices(ctx: OrgContext, name: str) -> list[tuple[str, str]] | None:
    """The choices of a parameter naming objects of the event (or organizer)."""
    if name == "list" and isinstance(ctx, EventContext):
        rows = await ctx.session.execute(
            select(CheckinList.id, CheckinList.name)
            .where(CheckinList.event_id == ctx.event.id)
            .order_by(CheckinList.id)
        )
        return [(str(i), n) for i, n in rows]
    if name == "questions" and isinstance(ctx, EventContext):
        rows = await ctx.session.execute(
            select(Question.id, Question.question)
            .where(Question.event_id == ctx.event.id)
            .order_by(Question.position, Question.id)
        )
        return [(str(i), text_of(n)) for i, n in rows]
    if name == "events":
        query = select(Event.slug, Event.name).where(Event.organizer_id == ctx.organizer_id)
        allowed = ctx.accessible_event_ids()
        if allowed is not None:
            query = query.where(Event.id.in_(sorted(allowed)))
        rows = await ctx.session.execute(query.order_by(Event.date_from.desc(), Event.id))
        return [(slug, text_of(n)) for slug, n in rows]
    return None


async def exporter_fields(ctx: OrgContext, level: str, desc: dict[str, Any]) -> list[Field]:
    """The form of one exporter (``desc``: its descriptor as the API lists it)."""
    fields = []
    for param in desc["input_parameters"]:
        name, required = param["name"], param["required"]
        label = LABELS.get(name, name.replace("_", " ").capitalize())
        info = _model_field(level, desc["identifier"], name)
        kinds = _kinds(info.annotation if info is not None else None)
        default = info.get_default() if info is not None and not required else None
        named = await named_choices(ctx, name)
        if param.get("choices"):
            choices = [(c, _choice_label(c)) for c in param["choices"]]
            first = param["choices"][0] if required else default
            fields.append(Field(name, label, "select", required, choices=choices, default=first))
        elif named is not None:
            kind = "multi" if list in kinds else "select"
            help = "None chosen: all." if kind == "multi" else ""
            fields.append(Field(name, label, kind, required, help=help, choices=named))
        elif bool in kinds:
            fields.append(Field(name, label, "bool"))
        elif kinds & {dt.date, dt.datetime}:
            fields.append(Field(name, label, "date", required, help="Empty: no bound."))
        else:
            fields.append(
                Field(
                    name,
                    label,
                    "text",
                    required,
                    default=default if isinstance(default, str | int) else None,
                )
            )
    return fields


def form_body(fields: list[Field], pairs: Pairs) -> dict[str, Any]:
    """The run request's JSON: the form's texts, ids of chosen objects as numbers; an empty
    optional field is left out (the exporter's default applies)."""
    body = {k: v for k, v in to_body(fields, pairs).items() if v is not None}
    for name, value in body.items():
        if name in INTEGERS and isinstance(value, str):
            body[name] = as_id(value)
        elif name in INTEGER_LISTS and isinstance(value, list):
            body[name] = [as_id(v) for v in value] or None
    if body.get("events") == []:
        body.pop("events")  # none chosen: every event the user may export
    return body
