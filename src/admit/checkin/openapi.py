"""What the OpenAPI document cannot see in the check-in routes: the answers they render
themselves and the parameters read outside any FilterSet. Registered with ``kit.openapi`` at
the import of ``checkin/routes.py``, so the document imports no domain."""

from __future__ import annotations

import re
from typing import Any

from admit.checkin.checkin_out import AnnulOut, CheckinListStatusOut, CheckinPositionOut, RedeemOut
from admit.checkin.expand import KINDS
from admit.checkin.positions import filters as ticket_filters
from admit.kit.openapi import query, responses
from admit.kit.openapi.query import E, O, expand, filter_param, param
from admit.kit.resources.crud import Page

_EXPAND_POSITION = expand(["item", "subevent", "variation"], "each position")

responses.document(
    {
        ("GET", f"{E}/checkinlists/{{id}}/status/"): CheckinListStatusOut,
        ("GET", f"{E}/checkinlists/{{id}}/positions/"): Page[CheckinPositionOut],
        ("GET", f"{E}/checkinlists/{{list}}/positions/{{id}}/"): CheckinPositionOut,
        ("POST", f"{O}/checkinrpc/redeem/"): RedeemOut,
        ("POST", f"{O}/checkinrpc/annul/"): AnnulOut,
        ("GET", f"{O}/checkinrpc/search/"): Page[CheckinPositionOut],
    },
    other={
        ("POST", f"{O}/checkinrpc/redeem/"): {"201": RedeemOut, "400": RedeemOut, "404": RedeemOut},
    },
)

query.document(
    {
        ("GET", f"{O}/checkinrpc/search/"): [
            param(
                "list",
                {"type": "array", "items": {"type": "integer"}},
                "The check-in lists to search, one per event (repeatable).",
                required=True,
                style="form",
                explode=True,
            ),
            _EXPAND_POSITION,
        ],
        ("GET", f"{E}/checkinlists/{{id}}/positions/"): [_EXPAND_POSITION],
        ("GET", f"{E}/checkinlists/{{list}}/positions/{{id}}/"): [_EXPAND_POSITION],
    }
)


@query.shaper
def _shaping() -> list[tuple[str, re.Pattern[str], list[dict[str, Any]]]]:
    org = re.escape(O)
    event = re.escape(E)
    return [
        ("*", re.compile(rf"^{event}/checkinlists/({{id}}/)?$"),
         [param("exclude", {"type": "array", "items": {"type": "string"}},
                "Leave these fields out of each list (repeatable).", style="form",
                explode=True)]),
        ("GET", re.compile(rf"^{event}/checkinlists/({{id}}/)?$"), [expand(["subevent"])]),
        ("POST", re.compile(rf"^{org}/checkinrpc/redeem/$"), [expand(KINDS, "the position")]),
        # One ticket of a list is found with the list's filters (404 when they exclude it).
        ("GET", re.compile(rf"^{event}/checkinlists/{{list}}/positions/{{id}}/$"),
         [filter_param(f) for f in ticket_filters([]).filters]),
    ]  # fmt: skip
