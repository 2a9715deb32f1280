"""Reading JSON request bodies ourselves: bounded size, DRF-shaped errors, never a 422."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request

from admit.kit.http.errors import APIError, FieldErrors, errors_from_pydantic


async def read_json(request: Request) -> Any:
    """The parsed body; ``{}`` when empty. 413 past the configured size, 400 when malformed."""
    limit: int = request.app.state.settings.max_body_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise APIError(413, "Request body is too large.")
    content_type = request.headers.get("content-type", "")
    if content_type and "json" not in content_type.split(";")[0].lower():
        raise APIError(415, f'Unsupported media type "{content_type}" in request.')
    chunks = bytearray()
    async for chunk in request.stream():
        chunks += chunk
        if len(chunks) > limit:
            raise APIError(413, "Request body is too large.")
    if not chunks.strip():
        return {}
    data = parse_json(bytes(chunks))
    # JSON can only carry NUL escaped; PostgreSQL text cannot store it at all.
    if b"\\u0000" in chunks:
        errors = [
            {"type": "null_character", "loc": tuple(path), "msg": NUL_MESSAGE, "input": None}
            for path in _nul_paths(data, [])
        ]
        if errors:
            raise FieldErrors(errors_from_pydantic(errors))
    return data


NUL_MESSAGE = "Null characters are not allowed."

# How deep a request body may nest. Real bodies of this API nest less than ten levels; past a
# few hundred, code that walks a value recursively (ours, pydantic's, the JSON writer's: orjson
# refuses to write more than 254 levels) fails with a RecursionError, i.e. a 500, or stores a
# value that can never be answered again. One bound, checked where every body is parsed (the
# application's reader and the fast lanes), keeps all of that out.
MAX_JSON_DEPTH = 64
DEPTH_MESSAGE = f"JSON is nested more than {MAX_JSON_DEPTH} levels deep."


def json_depth(value: Any, stop: int | None = None) -> int:
    """How many arrays/objects deep ``value`` nests (0 for a scalar); walked without recursion,
    so any depth is measured. With ``stop``, the walk ends as soon as that depth is passed."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if stop is not None and deepest > stop:
                return deepest
        stack.extend((child, depth) for child in children if isinstance(child, dict | list))
    return deepest


def too_deep(body: bytes, data: Any) -> bool:
    """Whether ``data`` (parsed from ``body``) nests past :data:`MAX_JSON_DEPTH`. A body with
    fewer brackets than that cannot (the common case, decided by two byte counts)."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return False
    return json_depth(data, MAX_JSON_DEPTH) > MAX_JSON_DEPTH


def parse_json(body: bytes) -> Any:
    """``body`` parsed; 400 when it is malformed or nests past :data:`MAX_JSON_DEPTH`."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if "recursion limit" in str(exc):
            raise FieldErrors.general(DEPTH_MESSAGE) from None
        raise APIError(400, f"JSON parse error - {exc}") from None
    if too_deep(body, data):
        raise FieldErrors.general(DEPTH_MESSAGE)
    return data


def _nul_paths(value: Any, path: list[str | int]) -> list[list[str | int]]:
    """Where a string (or object key) holding a NUL character sits in ``value``."""
    if isinstance(value, str):
        return [path] if "\x00" in value else []
    found: list[list[str | int]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found += [path] if "\x00" in key else _nul_paths(item, [*path, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _nul_paths(item, [*path, index])
    return found


async def read_object(request: Request) -> dict[str, Any]:
    data = await read_json(request)
    if not isinstance(data, dict):
        raise FieldErrors.general(
            f"Invalid data. Expected a dictionary, but got {_json_type(data)}."
        )
    return data


async def read_list(request: Request, max_items: int | None = None) -> list[Any]:
    """A list body; 400 (``non_field_errors``, as the reference's list serializers) past
    ``max_items`` entries: a batch route's work grows with its list, so each one bounds it."""
    data = await read_json(request)
    if not isinstance(data, list):
        raise FieldErrors.general(f'Expected a list of items but got type "{_json_type(data)}".')
    if max_items is not None and len(data) > max_items:
        raise FieldErrors.general(f"Ensure this field has no more than {max_items} elements.")
    return data


def _json_type(value: Any) -> str:
    return {dict: "dict", list: "list", str: "str", int: "int", float: "float", bool: "bool"}.get(
        type(value), "null" if value is None else type(value).__name__
    )
