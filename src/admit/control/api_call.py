"""Running an API handler for a back-office form: the form's fields become the JSON body the
API route would read, and the very handler the route calls (a resource's ``handle_create``,
the events' ``_create``, …) does the work, so validation, locks, notifications and stored
values are the API's and there is no second implementation of any rule.

The handler gets a copy of the page's context whose request carries that JSON body (and no
query string); the answer is the API's JSON, parsed. A refusal (``FieldErrors`` or
``APIError``) is turned into errors by field for the form, after the transaction's changes
are undone (:func:`~admit.control.access.discard`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson
from starlette.requests import Request
from starlette.responses import Response

from admit.control.access import discard
from admit.kit.http.context import OrgContext
from admit.kit.http.errors import NON_FIELD, APIError, FieldErrors
from admit.web.page import Page

C = TypeVar("C", bound=OrgContext)
Errors = dict[str, list[str]]


def json_request(request: Request, body: Any, method: str = "POST", query: str = "") -> Request:
    """A request like ``request`` (same app, client, host, path) whose body is ``body`` as
    JSON, as the API's routes read it."""
    payload = orjson.dumps(body)
    headers = [
        (k, v)
        for k, v in request.scope.get("headers", [])
        if k not in (b"content-type", b"content-length")
    ]
    headers += [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    scope = {**request.scope, "method": method, "headers": headers,
             "query_string": query.encode()}  # fmt: skip
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": payload, "more_body": False}

    return Request(scope, receive)


def with_body(ctx: C, body: Any, method: str = "POST", query: str = "") -> C:
    """A copy of ``ctx`` whose request carries ``body``; the same session and principal."""
    return dataclasses.replace(
        ctx, request=json_request(ctx.request, body, method, query), extra={}
    )


def flat_errors(errors: Any, prefix: str = "") -> Errors:
    """The API's error body as messages by field path (``name.en``, ``variations.0.value``)."""
    out: Errors = {}
    if isinstance(errors, dict):
        for key, value in errors.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                out.setdefault(path, []).extend(value)
            else:
                for k, v in flat_errors(value, path).items():
                    out.setdefault(k, []).extend(v)
    elif isinstance(errors, list):
        for index, value in enumerate(errors):
            if isinstance(value, str):
                out.setdefault(prefix or NON_FIELD, []).append(value)
            elif value:
                for k, v in flat_errors(
                    value, f"{prefix}.{index}" if prefix else str(index)
                ).items():
                    out.setdefault(k, []).extend(v)
    elif errors:
        out.setdefault(prefix or NON_FIELD, []).append(str(errors))
    return out


def by_field(errors: Errors) -> Errors:
    """Errors keyed by the form's field names: ``name.en`` is shown by ``name``."""
    out: Errors = {}
    for key, messages in errors.items():
        parts = key.split(".")
        if len(parts) > 1 and parts[0].isdigit():  # a batch's entry: all entries are alike
            parts = parts[1:]
        out.setdefault(parts[0], []).extend(messages)
    return out


def answer(response: Response) -> Any:
    body = bytes(response.body)
    return orjson.loads(body) if body else None


async def run(
    page: Page, ctx: OrgContext, work: Callable[[], Awaitable[Any]]
) -> tuple[Any, Errors]:
    """``work()``'s result (a response's JSON), or the errors it was refused with (the
    transaction rolled back, so nothing of the attempt is kept)."""
    try:
        result = await work()
    except FieldErrors as exc:
        await discard(page, ctx)
        return None, by_field(flat_errors(exc.errors)) or {NON_FIELD: ["Refused."]}
    except APIError as exc:
        await discard(page, ctx)
        return None, {NON_FIELD: [exc.detail]}
    return (answer(result) if isinstance(result, Response) else result), {}
