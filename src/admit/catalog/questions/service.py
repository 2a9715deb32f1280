"""Question rules: types and their settings, identifiers, item references, dependencies.

Everything a write needs from the database is read here in a few whole-event queries (the
event's questions, its matching items), so validation costs the same however long a
dependency chain is. Cross-field rules are checked on the merged state the route hands over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import load_only

from admit.catalog.questions.schemas import CHOICE_TYPES, DEPENDABLE_TYPES, QuestionIn
from admit.kit.http.errors import NON_FIELD, FieldErrors
from admit.kit.resources.filtering import PK_MAX
from admit.models import Item, Question, QuestionOption

# Upper-case letters and digits without look-alikes (no I, O, 0, 1, 2, 4, 5, 6).

OPTIONS_ON_UPDATE = (
    "Updating options via PATCH/PUT is not supported. Please use the dedicated nested endpoint."
)

# Which type each validity setting belongs to, and how the refusal reads.
_SETTING_TYPES: dict[str, tuple[frozenset[str], str]] = {
    "valid_number_min": (frozenset({"N"}), "number"),
    "valid_number_max": (frozenset({"N"}), "number"),
    "valid_date_min": (frozenset({"D"}), "date"),
    "valid_date_max": (frozenset({"D"}), "date"),
    "valid_datetime_min": (frozenset({"W"}), "date and time"),
    "valid_datetime_max": (frozenset({"W"}), "date and time"),
    "valid_string_length_min": (frozenset({"S", "T"}), "text"),
    "valid_string_length_max": (frozenset({"S", "T"}), "text"),
    "valid_file_portrait": (frozenset({"F"}), "file upload"),
}

_COPIED = (
    "question help_text type required position ask_during_checkin show_during_checkin hidden "
    "print_on_invoice valid_number_min valid_number_max valid_date_min valid_date_max "
    "valid_datetime_min valid_datetime_max valid_string_length_min valid_string_length_max "
    "valid_file_portrait"
).split()


def invalid_pk(pk: Any) -> str:
    return f'Invalid pk "{pk}" - object does not exist.'


def question_to_read(q: Question) -> dict[str, Any]:
    data = {name: getattr(q, name) for name in _COPIED}
    values = list(q.dependency_values or [])
    data.update(
        id=q.id,
        identifier=q.identifier,
        items=[item.id for item in q.items],
        options=list(q.options),
        dependency_question=q.dependency_question_id,
        dependency_values=values,
        dependency_value=values[0] if values else None,
    )
    return data


@dataclass
class _Row:
    id: int
    type: str
    ask_during_checkin: bool
    dependency_question_id: int | None


@dataclass
class Resolved:
    """What validation looked up, handed to ``apply_question``."""

    items: list[Item]
    dependency_values: list[str]
    taken_identifiers: set[str] = field(default_factory=set)


def requested_values(data: QuestionIn, supplied: set[str]) -> list[str]:
    """``dependency_values``, or the deprecated ``dependency_value`` when only that was sent."""
    if "dependency_value" in supplied and "dependency_values" not in supplied:
        return [data.dependency_value] if data.dependency_value else []
    return list(dict.fromkeys(data.dependency_values))


def _type_errors(data: QuestionIn, obj: Question | None, errors: dict[str, list[str]]) -> None:
    if obj is None and data.options and data.type not in CHOICE_TYPES:
        errors["options"] = ["Options are only allowed for choice and multiple choice questions."]
    if obj is not None and obj.options and data.type not in CHOICE_TYPES:
        errors["type"] = [
            "A question with options can only be a choice or multiple choice question. "
            "Delete its options first."
        ]
    for name, (types, label) in _SETTING_TYPES.items():
        value = getattr(data, name)
        if value not in (None, False) and data.type not in types:
            errors[name] = [f"This setting only applies to {label} questions."]
    for low, high in (
        ("valid_number_min", "valid_number_max"),
        ("valid_date_min", "valid_date_max"),
        ("valid_datetime_min", "valid_datetime_max"),
        ("valid_string_length_min", "valid_string_length_max"),
    ):
        lo, hi = getattr(data, low), getattr(data, high)
        if lo is not None and hi is not None and lo > hi and high not in errors:
            errors[high] = ["The maximum must not be less than the minimum."]


def _option_list_errors(data: QuestionIn, errors: dict[str, Any]) -> None:
    """Identifiers given for the new options must differ from each other."""
    seen: set[str] = set()
    nested: list[dict[str, list[str]]] = []
    for option in data.options or []:
        entry: dict[str, list[str]] = {}
        if option.identifier is not None:
            if option.identifier in seen:
                entry["identifier"] = [
                    f'The identifier "{option.identifier}" is already used for a different option.'
                ]
            seen.add(option.identifier)
        nested.append(entry)
    if any(nested) and "options" not in errors:
        errors["options"] = nested


async def _event_questions(session: AsyncSession, event_id: int) -> dict[int, _Row]:
    rows = await session.execute(
        select(
            Question.id, Question.type, Question.ask_during_checkin, Question.dependency_question_id
        ).where(Question.event_id == event_id)
    )
    return {r.id: _Row(r.id, r.type, r.ask_during_checkin, r.dependency_question_id) for r in rows}


async def _resolve_items(
    session: AsyncSession, event_id: int, ids: list[int], errors: dict[str, Any]
) -> list[Item]:
    wanted = list(dict.fromkeys(ids))
    valid = [pk for pk in wanted if 1 <= pk <= PK_MAX]
    found: dict[int, Item] = {}
    if valid:
        query = (
            select(Item)
            .where(Item.event_id == event_id, Item.id.in_(valid))
            .options(load_only(Item.id))
        )
        found = {item.id: item for item in (await session.scalars(query))}
    missing = [pk for pk in wanted if pk not in found]
    if missing:
        errors["items"] = [invalid_pk(pk) for pk in missing]
    return [found[pk] for pk in wanted if pk in found]


async def _dependency_errors(
    session: AsyncSession,
    data: QuestionIn,
    obj: Question | None,
    values: list[str],
    questions: dict[int, _Row],
    errors: dict[str, Any],
) -> None:
    dep_id = data.dependency_question
    if dep_id is None:
        return
    dep = questions.get(dep_id)
    if dep is None:
        errors["dependency_question"] = [invalid_pk(dep_id)]
        return
    if obj is not None and dep_id == obj.id:
        errors["dependency_question"] = ["A question cannot depend on itself."]
        return
    if dep.type not in DEPENDABLE_TYPES:
        errors["dependency_question"] = [
            "Question dependencies can only be set to boolean or choice questions."
        ]
        return
    if dep.ask_during_checkin:
        errors["dependency_question"] = [
            "Question cannot depend on a question asked during check-in."
        ]
        return
    seen = {obj.id} if obj is not None else set()
    current: int | None = dep_id
    while current is not None and current in questions:
        if current in seen:
            errors["dependency_question"] = ["Circular dependency between questions detected."]
            return
        seen.add(current)
        current = questions[current].dependency_question_id
    if data.ask_during_checkin:
        errors.setdefault(NON_FIELD, []).append("Dependencies are not supported during check-in.")
    if not values:
        errors["dependency_values"] = ["This field is required."]
        return
    if dep.type == "B":
        allowed = {"True", "False"}
        hint = 'For a boolean question the values are "True" and "False".'
    else:
        allowed = set(
            await session.scalars(
                select(QuestionOption.identifier).where(QuestionOption.question_id == dep_id)
            )
        )
        hint = "Use identifiers of the options of the dependency question."
    wrong = [v for v in values if v not in allowed]
    if wrong:
        errors["dependency_values"] = [f'"{v}" is not a valid choice. {hint}' for v in wrong]


def _dependent_errors(
    data: QuestionIn, obj: Question, questions: dict[int, _Row], errors: dict[str, Any]
) -> None:
    """A question others depend on must stay something they can depend on."""
    if not any(row.dependency_question_id == obj.id for row in questions.values()):
        return
    if data.ask_during_checkin:
        errors["ask_during_checkin"] = [
            "Other questions depend on this question, so it cannot be asked during check-in."
        ]
    same_kind = data.type == obj.type or {data.type, obj.type} <= CHOICE_TYPES
    if not same_kind and "type" not in errors:
        errors["type"] = [
            "Other questions depend on this question, so its type can only change between "
            "choice and multiple choice."
        ]


async def validate_question(
    session: AsyncSession,
    event_id: int,
    data: QuestionIn,
    obj: Question | None,
    supplied: set[str],
) -> Resolved:
    errors: dict[str, Any] = {}
    if obj is not None and "options" in supplied:
        errors[NON_FIELD] = [OPTIONS_ON_UPDATE]
    _type_errors(data, obj, errors)
    if obj is None:
        _option_list_errors(data, errors)
    identifiers = await session.execute(
        select(Question.id, func.lower(Question.identifier)).where(Question.event_id == event_id)
    )
    taken = {ident for pk, ident in identifiers if obj is None or pk != obj.id}
    if data.identifier is not None and data.identifier.lower() in taken:
        errors["identifier"] = ["This identifier is already used for a different question."]
    items = await _resolve_items(session, event_id, data.items, errors)
    values = requested_values(data, supplied) if data.dependency_question is not None else []
    questions = await _event_questions(session, event_id)
    await _dependency_errors(session, data, obj, values, questions, errors)
    if obj is not None:
        _dependent_errors(data, obj, questions, errors)
    if errors:
        raise FieldErrors(errors)
    return Resolved(items=items, dependency_values=values, taken_identifiers=taken)


def apply_question(q: Question, data: QuestionIn, resolved: Resolved, creating: bool) -> None:
    for name in _COPIED:
        setattr(q, name, getattr(data, name))
    q.dependency_question_id = data.dependency_question
    q.dependency_values = resolved.dependency_values
    q.items = resolved.items
    q.identifier = data.identifier
    if creating:
        q.options = [
            QuestionOption(identifier=o.identifier, position=o.position, answer=o.answer)
            for o in data.options or []
        ]


async def delete_question(session: AsyncSession, q: Question) -> None:
    """Dependents lose their dependency entirely: values without a question mean nothing."""
    await session.execute(
        update(Question)
        .where(Question.dependency_question_id == q.id)
        .values(dependency_question_id=None, dependency_values=[])
        .execution_options(synchronize_session=False)
    )
    await session.delete(q)
    await session.flush()


# -- options ------------------------------------------------------------------------------------


def option_identifier_taken(identifier: str) -> str:
    return f'The identifier "{identifier}" is already used for a different option.'


async def validate_option(
    session: AsyncSession, question: Question, identifier: str | None, obj: QuestionOption | None
) -> set[str]:
    """The question's other option identifiers; 400 when the new one is among them."""
    if obj is None and question.type not in CHOICE_TYPES:
        raise FieldErrors.general(
            "Options can only be added to choice and multiple choice questions."
        )
    query = select(QuestionOption.identifier).where(QuestionOption.question_id == question.id)
    if obj is not None:
        query = query.where(QuestionOption.id != obj.id)
    taken = set(await session.scalars(query))
    if identifier is not None and identifier in taken:
        raise FieldErrors.single("identifier", option_identifier_taken(identifier))
    return taken


async def _dependents(session: AsyncSession, question: Question) -> list[Question]:
    query = select(Question).where(
        Question.event_id == question.event_id, Question.dependency_question_id == question.id
    )
    return list(await session.scalars(query))


async def rename_option(session: AsyncSession, question: Question, old: str, new: str) -> None:
    """Dependency values name options by identifier: follow a rename."""
    if old == new:
        return
    for dependent in await _dependents(session, question):
        values = list(dependent.dependency_values or [])
        if old in values:
            renamed = [new if v == old else v for v in values]
            dependent.dependency_values = list(dict.fromkeys(renamed))


async def forget_option(session: AsyncSession, question: Question, identifier: str) -> None:
    """A deleted option leaves the dependency values; with none left the dependency goes."""
    for dependent in await _dependents(session, question):
        values = [v for v in dependent.dependency_values or [] if v != identifier]
        if values != list(dependent.dependency_values or []):
            dependent.dependency_values = values
            if not values:
                dependent.dependency_question_id = None
