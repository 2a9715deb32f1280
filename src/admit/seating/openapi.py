"""What the OpenAPI document cannot see in the seat routes: the expansions and the
availability flag read outside any FilterSet. Registered with ``kit.openapi`` at the import of
``seating/routes.py``, so the document imports no domain."""

from __future__ import annotations

import re
from typing import Any

from admit.kit.openapi import query
from admit.kit.openapi.query import E, expand, flag
from admit.seating.expand import EXPANDABLE


@query.shaper
def _shaping() -> list[tuple[str, re.Pattern[str], list[dict[str, Any]]]]:
    event = re.escape(E)
    return [
        ("*", re.compile(rf"^{event}/(subevents/{{subevent_id}}/)?seats/({{id}}/)?$"),
         [expand(EXPANDABLE, "each seat")]),
        ("GET", re.compile(rf"^{event}/(subevents/{{subevent_id}}/)?seats/$"),
         [flag("is_available", "Only seats free for sale (true) or only taken ones (false).")]),
    ]  # fmt: skip
