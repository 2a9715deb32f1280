"""Reading ``application/x-www-form-urlencoded`` bodies (pages and OAuth endpoints): bounded
in size and field count, UTF-8 only, no NUL characters (PostgreSQL text cannot hold them)."""

from __future__ import annotations

from urllib.parse import parse_qsl

from fastapi import Request

FORM_LIMIT = 64 * 1024
MAX_FIELDS = 200
FORM_TYPE = "application/x-www-form-urlencoded"

Pairs = list[tuple[str, str]]  # a form's fields in order, as ``read_form`` gives them


class FormError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def parse_pairs(text: str) -> list[tuple[str, str]]:
    try:
        pairs = parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except ValueError:
        raise FormError(400, "Too many fields in the request.") from None
    if any("\x00" in key or "\x00" in value for key, value in pairs):
        raise FormError(400, "Null characters are not allowed.")
    return pairs


async def read_form(request: Request) -> list[tuple[str, str]]:
    """The body's fields in order; an empty body has none."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > FORM_LIMIT:
        raise FormError(413, "Request body is too large.")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_LIMIT:
            raise FormError(413, "Request body is too large.")
    if not body.strip():
        return []
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != FORM_TYPE:
        raise FormError(400, f"The request body must be {FORM_TYPE}.")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise FormError(400, "The request body is not valid UTF-8.") from None
    return parse_pairs(text)


def first(pairs: list[tuple[str, str]], name: str, default: str = "") -> str:
    return next((v for k, v in pairs if k == name), default)


def every(pairs: list[tuple[str, str]], name: str) -> list[str]:
    return [v for k, v in pairs if k == name]
