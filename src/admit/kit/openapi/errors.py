"""The error answers every operation documents, in the shapes of ``kit/http/errors.py``.

Which statuses an operation can answer follows from what it is, the same rules the code
applies everywhere: credentials (401, 403), input (400, 413), objects named in the path or a
page past the end (404), writes (409: an idempotency key in use or reused with another body,
or a conflicting change; 412: ``If-Match``), detail reads (304: ``If-None-Match``), and for
all the rate limit (429) and an unavailable database (503).
"""

from __future__ import annotations

from typing import Any

ERROR = "Error"
FIELD_ERRORS = "FieldErrors"

SCHEMAS: dict[str, dict[str, Any]] = {
    ERROR: {
        "title": ERROR,
        "type": "object",
        "description": "An error with a human-readable message.",
        "properties": {"detail": {"type": "string"}},
        "required": ["detail"],
    },
    FIELD_ERRORS: {
        "title": FIELD_ERRORS,
        "type": "object",
        "description": "Messages by field name (lists of messages; nested objects or lists of "
        "them for nested input); non_field_errors for rules spanning fields.",
        "additionalProperties": {"anyOf": [{"type": "array"}, {"type": "object"}]},
        "minProperties": 1,
    },
}

DESCRIPTIONS = {
    "304": "Not modified: the representation still has the ETag named by If-None-Match.",
    "400": "Invalid input: messages by field name.",
    "401": "No credentials, or invalid, inactive or revoked ones.",
    "403": "Not permitted, or the organizer or event is unknown to the caller.",
    "404": "Not found (or a page past the end of the list).",
    "409": "Conflict: the idempotency key is in use or was used for another request, or the "
    "change conflicts with the current state.",
    "412": "If-Match names no current ETag of the resource.",
    "413": "The request body is too large.",
    "429": "Rate limit exceeded: retry after Retry-After seconds.",
    "503": "The database is unavailable: retry after Retry-After seconds.",
}

ROUTING_PARAMS = frozenset({"organizer", "event"})


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def error_body(status: str) -> dict[str, Any]:
    if status == "400":
        return {"anyOf": [_ref(FIELD_ERRORS), _ref(ERROR)]}
    return _ref(ERROR)


def statuses(
    method: str, path: str, operation: dict[str, Any], *, credentials: bool, is_list: bool
) -> list[str]:
    """The error statuses of one operation."""
    params = operation.get("parameters", [])
    path_params = {p["name"] for p in params if p.get("in") == "path"}
    takes_query = any(p.get("in") == "query" for p in params)
    has_body = "requestBody" in operation
    found = ["429", "503"]
    if credentials:
        found += ["401", "403"]
    if has_body or takes_query or method in ("POST", "PUT", "PATCH"):
        found.append("400")
    if path_params - ROUTING_PARAMS or is_list:
        found.append("404")
    if method != "GET":
        found.append("409")
    if has_body:
        found.append("413")
    detail = path.endswith("}/") and bool(path_params - ROUTING_PARAMS)
    if method in ("PUT", "PATCH", "DELETE") and detail:
        found.append("412")
    if method == "GET" and (path.endswith("}/") or path.endswith("/events/{event}/")):
        found.append("304")
    return found


def add_errors(
    method: str, path: str, operation: dict[str, Any], *, credentials: bool, is_list: bool
) -> None:
    """Adds the operation's error answers (keeping any it documents itself)."""
    responses = operation.setdefault("responses", {})
    for status in statuses(method, path, operation, credentials=credentials, is_list=is_list):
        answer = responses.setdefault(status, {"description": DESCRIPTIONS[status]})
        if status == "304":
            continue
        answer.setdefault("content", {"application/json": {"schema": error_body(status)}})
    for status, answer in responses.items():
        # Statuses a route declares with a description only answer the usual error body.
        if status.startswith(("4", "5")) and "content" not in answer:
            answer["content"] = {"application/json": {"schema": error_body(status)}}
