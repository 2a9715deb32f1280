"""The item settings clients of the reference read and write besides the sale basics: how the
shop shows an item outside its window or while another sells, memberships required or granted,
reusable media, and how long its tickets are valid.

Kept apart from ``item_service`` so that module stays about the item's core; this one owns the
rules of these fields (choices, references into the same event or organizer, cross-field rules)
and how they are read and written.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.items.schemas import Count, Ref
from admit.catalog.items.service import Errors, invalid_pk, load_by_id
from admit.kit.http.errors import NON_FIELD
from admit.kit.resources.schema import DateTime, ReadModel, WriteModel
from admit.models import Event, Item, MembershipType, Quota

UnavailableMode = Literal["hide", "info"]
MediaPolicy = Literal["reuse", "new", "reuse_or_new"]
# The reference's media types; which of them can stand for a ticket (not only a gift card).
MEDIA_TYPES = ("barcode", "nfc_uid", "nfc_mf0aes")
TICKET_MEDIA_TYPES = frozenset({"barcode", "nfc_uid"})
MediaType = Literal["barcode", "nfc_uid", "nfc_mf0aes"]
DURATIONS = ("months", "days", "hours", "minutes")

# Plain columns: same name on the input, the output and the model.
PLAIN = (
    "available_from_mode available_until_mode hidden_if_item_available_mode require_membership "
    "require_membership_hidden grant_membership_duration_like_event "
    "grant_membership_duration_days grant_membership_duration_months media_policy media_type "
    "validity_mode validity_fixed_from validity_fixed_until validity_dynamic_duration_minutes "
    "validity_dynamic_duration_hours validity_dynamic_duration_days "
    "validity_dynamic_duration_months validity_dynamic_start_choice "
    "validity_dynamic_start_choice_day_limit"
).split()
# References: input/output name -> model column.
REFS = {
    "hidden_if_available": "hidden_if_available_id",
    "hidden_if_item_available": "hidden_if_item_available_id",
    "grant_membership_type": "grant_membership_type_id",
}


class ProgramTimeIn(WriteModel):
    start: DateTime
    end: DateTime


class ProgramTimeOut(ReadModel):
    start: dt.datetime
    end: dt.datetime


MAX_PROGRAM_TIMES = 1000
SLOT_ORDER = "The end of a program time must be after its start."


class ItemParityIn(WriteModel):
    """Mixed into ``ItemIn``: defaults are the reference's."""

    available_from_mode: UnavailableMode = "hide"
    available_until_mode: UnavailableMode = "hide"
    hidden_if_available: Ref | None = None  # a quota (deprecated by the reference)
    hidden_if_item_available: Ref | None = None
    hidden_if_item_available_mode: UnavailableMode = "hide"
    require_membership: bool = False
    require_membership_types: Annotated[list[Ref], Field(max_length=1000)] = []
    require_membership_hidden: bool = False
    grant_membership_type: Ref | None = None
    grant_membership_duration_like_event: bool = True
    grant_membership_duration_days: Count = 0
    grant_membership_duration_months: Count = 0
    media_policy: MediaPolicy | None = None
    media_type: MediaType | None = None
    validity_mode: Literal["fixed", "dynamic"] | None = None
    validity_fixed_from: DateTime | None = None
    validity_fixed_until: DateTime | None = None
    validity_dynamic_duration_minutes: Count | None = None
    validity_dynamic_duration_hours: Count | None = None
    validity_dynamic_duration_days: Count | None = None
    validity_dynamic_duration_months: Count | None = None
    validity_dynamic_start_choice: bool = False
    validity_dynamic_start_choice_day_limit: Count | None = None
    program_times: Annotated[list[ProgramTimeIn], Field(max_length=MAX_PROGRAM_TIMES)] = []


def parity_to_read(item: Item) -> dict[str, Any]:
    """The fields as the API shows them (``require_membership_types`` must be loaded)."""
    data = {name: getattr(item, name) for name in PLAIN}
    for name, column in REFS.items():
        data[name] = getattr(item, column)
    data["require_membership_types"] = [t.id for t in item.require_membership_types]
    data["program_times"] = public_slots(item.program_times)
    return data


def numbered(slots: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """The stored slots, each with its id (``items/{item}/program_times/{id}/``). Slots kept
    before slots had ids get theirs in list order after the highest id: the same on every
    read, and stored so by the next write (every write starts from this list)."""
    out = [dict(slot) for slot in slots or []]
    top = max((s["id"] for s in out if isinstance(s.get("id"), int)), default=0)
    for slot in out:
        if not isinstance(slot.get("id"), int):
            top += 1
            slot["id"] = top
    return out


def public_slots(slots: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """The item's ``program_times`` field: start and end only, as the reference shows it."""
    return [{"start": slot["start"], "end": slot["end"]} for slot in slots or []]


def new_slot(slots: Sequence[Mapping[str, Any]], start: dt.datetime, end: dt.datetime) -> dict:
    """A slot after ``slots`` (numbered), with the next id of the item."""
    top = max((s["id"] for s in slots), default=0)
    return {"id": top + 1, "start": utc_text(start), "end": utc_text(end)}


_DATETIME_JSON = TypeAdapter(dt.datetime)


def utc_text(value: dt.datetime) -> str:
    """A datetime as the API renders one (UTC): stored so in JSON, it reads back unchanged."""
    return str(_DATETIME_JSON.dump_python(value.astimezone(dt.UTC), mode="json"))


def _program_time_errors(data: ItemParityIn) -> list[dict[str, list[str]]] | None:
    found = [{"end": [SLOT_ORDER]} if slot.end <= slot.start else {} for slot in data.program_times]
    return found if any(found) else None


def _validity_errors(data: ItemParityIn, errors: Errors) -> None:
    if data.validity_mode == "fixed":
        start, end = data.validity_fixed_from, data.validity_fixed_until
        if start is not None and end is not None and start > end:
            errors["validity_fixed_from"] = [
                "The start of validity must be before the end of validity."
            ]
    if data.validity_mode == "dynamic" and not any(
        getattr(data, f"validity_dynamic_duration_{unit}") for unit in DURATIONS
    ):
        errors["validity_dynamic_duration_months"] = [
            "You have selected dynamic validity but have not entered a time period. This "
            "would render the tickets unusable."
        ]


def _media_errors(data: ItemParityIn, issue_giftcard: bool) -> list[str]:
    if not data.media_policy:
        return []
    if not data.media_type:
        return [
            "If you select a reusable media policy, you also need to select a reusable media type."
        ]
    if issue_giftcard:
        return [
            "You currently cannot create gift cards with a reusable media policy. Instead, gift "
            "cards for some reusable media types can be created or re-charged directly at the "
            "POS."
        ]
    if data.media_type not in TICKET_MEDIA_TYPES:
        return ["The selected media type does not support usage for tickets currently."]
    return []


async def parity_errors(
    session: AsyncSession, event: Event, data: ItemParityIn, item: Item | None, giftcard: bool
) -> Errors:
    """Field errors (and ``non_field_errors``) of these settings; references are looked up
    in the item's event (quotas, items) or organizer (membership types)."""
    errors: Errors = {}
    if data.hidden_if_available is not None:
        found = await load_by_id(
            session, Quota, [data.hidden_if_available], Quota.event_id == event.id
        )
        if not found:
            errors["hidden_if_available"] = [invalid_pk(data.hidden_if_available)]
    other = data.hidden_if_item_available
    if other is not None:
        if item is not None and other == item.id:
            errors["hidden_if_item_available"] = [
                "An item cannot be hidden depending on its own availability."
            ]
        elif not await load_by_id(session, Item, [other], Item.event_id == event.id):
            errors["hidden_if_item_available"] = [invalid_pk(other)]
    wanted = [*data.require_membership_types]
    if data.grant_membership_type is not None:
        wanted.append(data.grant_membership_type)
    types = await load_by_id(
        session, MembershipType, wanted, MembershipType.organizer_id == event.organizer_id
    )
    missing = [pk for pk in data.require_membership_types if pk not in types]
    if missing:
        errors["require_membership_types"] = [invalid_pk(missing[0])]
    elif data.require_membership and not data.require_membership_types:
        errors["require_membership_types"] = [
            "If a valid membership is required, at least one valid membership type needs to "
            "be selected."
        ]
    if data.grant_membership_type is not None and data.grant_membership_type not in types:
        errors["grant_membership_type"] = [invalid_pk(data.grant_membership_type)]
    _validity_errors(data, errors)
    slots = _program_time_errors(data)
    if slots:
        errors["program_times"] = slots
    media = _media_errors(data, giftcard)
    if media:
        errors.setdefault(NON_FIELD, []).extend(media)
    return errors


async def membership_types(session: AsyncSession, data: ItemParityIn) -> list[MembershipType]:
    """The required membership types in the order sent (checked by :func:`parity_errors`)."""
    ids = list(dict.fromkeys(data.require_membership_types))
    found = await load_by_id(session, MembershipType, ids) if ids else {}
    return [found[pk] for pk in ids if pk in found]


def apply_parity(item: Item, data: ItemParityIn, types: list[MembershipType]) -> None:
    """Writes the settings as sent (the reference keeps values of an unused mode, too)."""
    for name in PLAIN:
        setattr(item, name, getattr(data, name))
    for name, column in REFS.items():
        setattr(item, column, getattr(data, name))
    item.require_membership_types = types
    item.program_times = _keep_slot_ids(numbered(item.program_times), data.program_times)


def _keep_slot_ids(old: list[dict[str, Any]], sent: list[ProgramTimeIn]) -> list[dict[str, Any]]:
    """The item field replaces the whole list; a slot sent again (same start and end) keeps
    its id, so writing an item back as read leaves ``program_times/{id}/`` URLs working."""
    spare: dict[tuple[str, str], list[int]] = {}
    for slot in old:
        spare.setdefault((slot["start"], slot["end"]), []).append(slot["id"])
    top = max((slot["id"] for slot in old), default=0)
    slots = []
    for slot in sent:
        start, end = utc_text(slot.start), utc_text(slot.end)
        kept = spare.get((start, end))
        if kept:
            slot_id = kept.pop(0)
        else:
            top += 1
            slot_id = top
        slots.append({"id": slot_id, "start": start, "end": end})
    return slots
