"""The rows a redeem reads (``lookup.py``), parsed into plain objects: the list, and the ticket
with its order flags, check-ins on the list and answers. Both databases hand JSON and
datetimes back a little differently (text on SQLite); everything is normalised here."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from admit.models import OrderPosition

POSITION_KEYS = tuple(c.key for c in OrderPosition.__table__.columns)


@dataclass
class ListRow:
    id: int
    name: str
    event_id: int
    subevent_id: int | None
    all_products: bool
    include_pending: bool
    allow_multiple_entries: bool
    allow_entry_after_exit: bool
    exit_all_at: dt.datetime | None
    addon_match: bool
    rules: dict[str, Any]
    event_slug: str
    timezone: str
    event_date_from: dt.datetime
    event_date_to: dt.datetime | None
    event_date_admission: dt.datetime | None

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "event": self.event_slug,
            "subevent": self.subevent_id,
            "include_pending": self.include_pending,
        }


LIST_WIDTH = len(ListRow.__dataclass_fields__)  # the list and event columns opening every row


@dataclass
class Scan:
    """A successful check-in of the ticket on the list (or a failed one with our nonce)."""

    id: int
    seq: int | None
    type: str
    datetime: dt.datetime
    successful: bool
    error_reason: str | None
    nonce: str | None
    device_id: int | None
    device_number: int | None
    gate_id: int | None
    auto_checked_in: bool


@dataclass
class Match:
    """The ticket found on a list, with what the decision needs."""

    position: dict[str, Any]
    order_code: str
    order_status: str
    order_require_approval: bool
    order_valid_if_pending: bool
    order_locale: str
    order_checkin_attention: bool
    order_checkin_text: str | None
    invoice_address: dict[str, Any] | None
    item_checkin_attention: bool
    item_checkin_text: str | None
    variation_checkin_attention: bool
    variation_checkin_text: str | None
    subevent_dates: tuple[dt.datetime | None, dt.datetime | None, dt.datetime | None]
    on_list: bool
    parent_name: str | None
    scans: list[Scan]
    answers: list[dict[str, Any]]
    missing_questions: int

    @property
    def id(self) -> int:
        return self.position["id"]

    @property
    def successful(self) -> list[Scan]:
        return [s for s in self.scans if s.successful]


@dataclass
class Found:
    list: ListRow
    match: Match | None


def _loads(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str | bytes):
        return orjson.loads(value)
    return value


def _aware(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        moment = value
    else:
        moment = dt.datetime.fromisoformat(str(value).replace(" ", "T"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def _scan(raw: dict[str, Any]) -> Scan:
    return Scan(
        id=raw["id"],
        seq=raw["seq"],
        type=raw["type"],
        datetime=_aware(raw["datetime"]),
        successful=bool(raw["successful"]),
        error_reason=raw["error_reason"],
        nonce=raw["nonce"],
        device_id=raw["device_id"],
        device_number=raw["device_number"],
        gate_id=raw["gate_id"],
        auto_checked_in=bool(raw["auto_checked_in"]),
    )


def _answer(raw: dict[str, Any]) -> dict[str, Any]:
    raw["text"] = _loads(raw.get("text")) or {}
    raw["options"] = _loads(raw.get("options")) or []
    raw["show"] = bool(raw.get("show"))
    return raw


def parse(row: Sequence[Any]) -> Found:
    n_list = LIST_WIDTH
    listed = ListRow(*row[:n_list])
    listed.rules = _loads(listed.rules) or {}
    listed.exit_all_at = _aware(listed.exit_all_at) if listed.exit_all_at else None
    listed.event_date_from = _aware(listed.event_date_from)
    if listed.event_date_to is not None:
        listed.event_date_to = _aware(listed.event_date_to)
    if listed.event_date_admission is not None:
        listed.event_date_admission = _aware(listed.event_date_admission)
    position = dict(zip(POSITION_KEYS, row[n_list : n_list + len(POSITION_KEYS)], strict=True))
    if position["id"] is None:
        return Found(listed, None)
    rest = row[n_list + len(POSITION_KEYS) :]
    (code, status, approval, valid_pending, locale, o_att, o_text, invoice, i_att, i_text,
     v_att, v_text, s_from, s_to, s_adm, on_list, parent_name, scans, answers,
     missing) = rest  # fmt: skip
    for key in ("attendee_name_parts", "blocked"):
        position[key] = _loads(position[key])
    scan_list = sorted((_scan(s) for s in _loads(scans) or []), key=lambda s: (s.datetime, s.id))
    return Found(
        listed,
        Match(
            position=position,
            order_code=code,
            order_status=status,
            order_require_approval=bool(approval),
            order_valid_if_pending=bool(valid_pending),
            order_locale=locale,
            order_checkin_attention=bool(o_att),
            order_checkin_text=o_text,
            invoice_address=_loads(invoice),
            item_checkin_attention=bool(i_att),
            item_checkin_text=i_text,
            variation_checkin_attention=bool(v_att),
            variation_checkin_text=v_text,
            subevent_dates=(s_from, s_to, s_adm),
            on_list=bool(on_list),
            parent_name=parent_name,
            scans=scan_list,
            answers=[_answer(a) for a in _loads(answers) or []],
            missing_questions=int(missing or 0),
        ),
    )
