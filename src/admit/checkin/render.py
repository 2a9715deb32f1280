"""The ticket as scanners see it: the order position resource with the check-ins of one list,
``require_attention``, an attendee name that falls back to the parent ticket or the invoice
address, the order fields a scanner shows, and the texts to show at the door."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

from admit.checkin.rows import Match, Scan
from admit.models import OrderPosition
from admit.orders.serialize import checkin_dict, position_dict


def _snapshot(match: Match) -> OrderPosition:
    """The position (with answers) as ``position_dict`` reads it: plain attributes from the
    lookup row, no ORM instance."""
    answers = [
        SimpleNamespace(
            id=raw["id"],
            question_id=raw["question"],
            answer=raw["answer"],
            options=[
                SimpleNamespace(id=o["id"], identifier=o["identifier"]) for o in raw["options"]
            ],
        )
        for raw in sorted(match.answers, key=lambda a: a["id"])
    ]
    return SimpleNamespace(**match.position, answers=answers)  # type: ignore[return-value]


def scan_dict(scan: Scan, list_id: int) -> dict[str, Any]:
    return checkin_dict(
        id=scan.id,
        list_id=list_id,
        when=scan.datetime,
        kind=scan.type,
        gate_id=scan.gate_id,
        device_id=scan.device_id,
        device_number=scan.device_number,
        auto_checked_in=scan.auto_checked_in,
    )


def require_attention(match: Match) -> bool:
    return (
        match.order_checkin_attention
        or match.item_checkin_attention
        or match.variation_checkin_attention
    )


def _fallback_name(match: Match) -> str | None:
    if match.parent_name:
        return match.parent_name
    address = match.invoice_address or {}
    name = address.get("name")
    if not name and isinstance(address.get("name_parts"), dict):
        parts = address["name_parts"]
        name = " ".join(v for k, v in parts.items() if k != "_scheme" and v)
    return name or None


def position_body(match: Match, list_id: int) -> dict[str, Any]:
    pos = _snapshot(match)
    idents = {a["question"]: a["identifier"] for a in match.answers}
    body = position_dict(pos, match.order_code, idents)
    body["checkins"] = [scan_dict(s, list_id) for s in match.scans if s.successful]
    if not body["attendee_name"]:
        body["attendee_name"] = _fallback_name(match)
    body["require_attention"] = require_attention(match)
    body["order__status"] = match.order_status
    body["order__valid_if_pending"] = match.order_valid_if_pending
    body["order__require_approval"] = match.order_require_approval
    body["order__locale"] = match.order_locale
    return body


def _i18n(value: Any, locale: str | None) -> str:
    if isinstance(value, dict):
        return str(value.get(locale or "en") or value.get("en") or next(iter(value.values()), ""))
    return str(value or "")


def checkin_texts(match: Match, locale: str | None = None) -> list[str]:
    """The order's, product's and variation's check-in texts, then the answers of questions
    marked ``show_during_checkin``."""
    texts = [
        t
        for t in (match.order_checkin_text, match.item_checkin_text, match.variation_checkin_text)
        if t
    ]
    for answer in sorted(match.answers, key=lambda a: a["id"]):
        if answer["show"] and answer["answer"]:
            texts.append(f"{_i18n(answer['text'], locale)}: {answer['answer']}")
    return texts


def new_scan(new_id: int, kind: str, when: dt.datetime, device: Any, seq: int | None) -> Scan:
    device_id, device_number, gate_id = device
    return Scan(
        id=new_id,
        seq=seq,
        type=kind,
        datetime=when,
        successful=True,
        error_reason=None,
        nonce=None,
        device_id=device_id,
        device_number=device_number,
        gate_id=gate_id,
        auto_checked_in=False,
    )
