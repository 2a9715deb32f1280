"""Reading JSON request bodies ourselves: bounded size, DRF-shaped errors, never a 422."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request

from admit.kit.errors import APIError, FieldErrors, errors_from_pydantic


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
    try:
        data = orjson.loads(chunks)
    except orjson.JSONDecodeError as exc:
        raise APIError(400, f"JSON parse error - {exc}") from None
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


async def read_list(request: Request) -> list[Any]:
    data = await read_json(request)
    if not isinstance(data, list):
        raise FieldErrors.general(f'Expected a list of items but got type "{_json_type(data)}".')
    return data


def _json_type(value: Any) -> str:
    return {dict: "dict", list: "list", str: "str", int: "int", float: "float", bool: "bool"}.get(
        type(value), "null" if value is None else type(value).__name__
    )
