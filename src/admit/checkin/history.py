"""Check-in history ``E/checkins/`` (list, detail): every scan of the event, successful or not.

Filters: ``created_since`` / ``datetime_since`` (inclusive), ``created_before`` /
``datetime_before`` (exclusive), ``successful``, ``error_reason``, ``list``, ``type``,
``gate``, ``device`` (device id), ``auto_checked_in``; ordering by ``datetime``, ``created``
or ``id`` (default ``created``). Each query is served by an index on the event and the
ordered column.
"""

from __future__ import annotations

from typing import Any

from admit.checkin.access import READ, AnyEventPermission
from admit.checkin.schemas import CheckinOut
from admit.kit.http.context import OrgContext
from admit.kit.resources.crud import Resource
from admit.kit.resources.filtering import (
    Filter,
    FilterSet,
    Ordering,
    parse_datetime,
    parse_int,
)
from admit.kit.resources.render import Rows
from admit.kit.stamps.catalog import event_pages
from admit.models import Checkin

REASONS = frozenset(
    "canceled invalid unpaid product rules revoked incomplete already_redeemed ambiguous error "
    "blocked unapproved invalid_time annulled".split()
)


def _reason(raw: str) -> str:
    if raw not in REASONS:
        raise ValueError(f'"{raw}" is not a valid choice.')
    return raw


def _kind(raw: str) -> str:
    if raw not in ("entry", "exit"):
        raise ValueError(f'"{raw}" is not a valid choice.')
    return raw


FILTERS = FilterSet(
    (
        Filter.where("created_since", parse_datetime, lambda v: Checkin.created >= v),
        Filter.where("created_before", parse_datetime, lambda v: Checkin.created < v),
        Filter.where("datetime_since", parse_datetime, lambda v: Checkin.datetime >= v),
        Filter.where("datetime_before", parse_datetime, lambda v: Checkin.datetime < v),
        Filter.boolean("successful", Checkin.successful),
        Filter.eq("error_reason", Checkin.error_reason, _reason),
        Filter.eq("list", Checkin.list_id, parse_int),
        Filter.eq("type", Checkin.type, _kind),
        Filter.eq("gate", Checkin.gate_id, parse_int),
        Filter.eq("device", Checkin.device_id, parse_int),
        Filter.boolean("auto_checked_in", Checkin.auto_checked_in),
    )
)


def checkin_to_read(c: Checkin) -> dict[str, Any]:
    return {
        "id": c.id,
        "successful": c.successful,
        "error_reason": c.error_reason,
        "error_explanation": c.error_explanation,
        "position": c.position_id,
        "datetime": c.datetime,
        "created": c.created,
        "list": c.list_id,
        "auto_checked_in": c.auto_checked_in,
        "gate": c.gate_id,
        "device": c.device_id,
        "device_id": c.device_number,
        "type": c.type,
    }


# GETs render straight from the rows (``kit/resources/render.py``); ``device_id`` is the device's
# number within the organizer, ``device`` its id.
HISTORY_ROWS = Rows(CheckinOut, Checkin, columns={"device_id": Checkin.device_number})


class CheckinHistory(Resource[Checkin]):
    name = "checkins"
    path = "/organizers/{organizer}/events/{event}/checkins"
    model = Checkin
    read_schema = CheckinOut
    read_permission = READ[0]
    actions = frozenset({"list", "retrieve"})
    filters = FILTERS
    ordering = Ordering(
        fields={"datetime": Checkin.datetime, "created": Checkin.created, "id": Checkin.id},
        default=("created",),
        pk=Checkin.id,
    )
    tag = "checkin"
    renderer = HISTORY_ROWS
    kept_by = event_pages(Checkin.last_modified)

    def access(self, permission: str | None) -> AnyEventPermission:
        return AnyEventPermission(*READ)

    def to_read(self, ctx: OrgContext, obj: Checkin) -> Any:
        return checkin_to_read(obj)


history = CheckinHistory()
