"""Error types and their DRF-shaped bodies, so every client parses one shape.

400 bodies are ``{"field": ["message"]}`` (nested for lists, ``non_field_errors`` for cross-field
rules); 401/403/404/405/409/413/503 bodies are ``{"detail": "..."}``. FastAPI's 422 never escapes.

A database that is down, restarting or out of pooled connections is no bug of the request: it is
answered 503 with ``Retry-After`` (never a 500 with a traceback), on the framework path and on
the fast lane alike (:func:`database_error_response`).
"""

from __future__ import annotations

import errno
import logging
import socket
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

import asyncpg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send

from admit.kit.http.logs import escape_controls
from admit.kit.http.responses import JSONResponse

log = logging.getLogger("admit")

NON_FIELD = "non_field_errors"


class APIError(Exception):
    """An error answered as ``{"detail": ...}`` (plus optional extra body fields)."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})

    def body(self) -> dict[str, Any]:
        return {"detail": self.detail, **self.extra}


class FieldErrors(Exception):
    """A 400 (or other status) with a body keyed by field name."""

    def __init__(self, errors: Mapping[str, Any] | Sequence[Any], status: int = 400) -> None:
        super().__init__(str(errors))
        self.errors = errors
        self.status = status

    @classmethod
    def single(cls, field: str, message: str, status: int = 400) -> FieldErrors:
        return cls({field: [message]}, status=status)

    @classmethod
    def general(cls, message: str, status: int = 400) -> FieldErrors:
        return cls({NON_FIELD: [message]}, status=status)


def not_found(detail: str = "Not found.") -> APIError:
    return APIError(404, detail)


def forbidden(detail: str = "You do not have permission to perform this action.") -> APIError:
    return APIError(403, detail)


def _message(error: Mapping[str, Any]) -> str:
    """A DRF-like message for a pydantic error, so messages read the same across endpoints."""
    kind = error.get("type", "")
    # Bounds reach here as numbers, or (after a custom validator) as their repr: Decimal('0').
    ctx = {
        key: value[9:-2] if isinstance(value, str) and value.startswith("Decimal('") else value
        for key, value in (error.get("ctx") or {}).items()
    }
    inp = error.get("input")
    if kind == "missing":
        return "This field is required."
    if inp is None and kind.endswith("_type"):
        return "This field may not be null."
    if kind in ("value_error", "assertion_error"):
        return str(ctx.get("error", error.get("msg", "Invalid value.")))
    table = {
        "string_type": "Not a valid string.",
        "int_type": "A valid integer is required.",
        "int_parsing": "A valid integer is required.",
        "int_from_float": "A valid integer is required.",
        "bool_type": "Must be a valid boolean.",
        "bool_parsing": "Must be a valid boolean.",
        "float_type": "A valid number is required.",
        "float_parsing": "A valid number is required.",
        "decimal_type": "A valid number is required.",
        "decimal_parsing": "A valid number is required.",
        "datetime_type": "Datetime has wrong format. Use one of these formats instead: "
        "YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].",
        "datetime_parsing": "Datetime has wrong format. Use one of these formats instead: "
        "YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].",
        "datetime_from_date_parsing": "Datetime has wrong format. Use one of these formats "
        "instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].",
        "date_type": "Date has wrong format. Use one of these formats instead: YYYY-MM-DD.",
        "date_parsing": "Date has wrong format. Use one of these formats instead: YYYY-MM-DD.",
        "date_from_datetime_parsing": "Date has wrong format. Use one of these formats "
        "instead: YYYY-MM-DD.",
        "time_type": "Time has wrong format. Use one of these formats instead: hh:mm[:ss].",
        "time_parsing": "Time has wrong format. Use one of these formats instead: hh:mm[:ss].",
        "list_type": f'Expected a list of items but got type "{type(inp).__name__}".',
        "dict_type": f'Expected a dictionary of items but got type "{type(inp).__name__}".',
        "model_type": f"Invalid data. Expected a dictionary, but got {type(inp).__name__}.",
        "model_attributes_type": "Invalid data. Expected a dictionary, but got "
        f"{type(inp).__name__}.",
        "literal_error": f'"{inp}" is not a valid choice.',
        "enum": f'"{inp}" is not a valid choice.',
        "string_too_long": f"Ensure this field has no more than {ctx.get('max_length')} "
        "characters.",
        "string_too_short": "This field may not be blank."
        if ctx.get("min_length") == 1
        else f"Ensure this field has at least {ctx.get('min_length')} characters.",
        # Strings come here too when a custom validator precedes the length check.
        "too_long": f"Ensure this field has no more than {ctx.get('max_length')} "
        + ("characters." if isinstance(inp, str) else "items."),
        "too_short": "This list may not be empty."
        if ctx.get("min_length") == 1
        else f"Ensure this field has at least {ctx.get('min_length')} items.",
        "extra_forbidden": "This field is not allowed here.",
        "greater_than_equal": f"Ensure this value is greater than or equal to {ctx.get('ge')}.",
        "less_than_equal": f"Ensure this value is less than or equal to {ctx.get('le')}.",
        "greater_than": f"Ensure this value is greater than {ctx.get('gt')}.",
        "less_than": f"Ensure this value is less than {ctx.get('lt')}.",
        "string_pattern_mismatch": "This value does not match the required pattern.",
        "decimal_max_places": f"Ensure that there are no more than {ctx.get('decimal_places')} "
        "decimal places.",
        "decimal_max_digits": f"Ensure that there are no more than {ctx.get('max_digits')} "
        "digits in total.",
        "decimal_whole_digits": "Ensure that there are no more than "
        f"{ctx.get('whole_digits')} digits before the decimal point.",
        "finite_number": "A valid number is required.",
        "value_error": str(ctx.get("error", "")),
    }
    return table.get(kind) or str(error.get("msg", "Invalid value."))


def _insert(tree: Any, path: Sequence[str | int], message: str) -> Any:
    """Place ``message`` at ``path`` in a DRF-shaped error tree (lists padded with ``{}``)."""
    if not path:
        if isinstance(tree, list):
            tree.append(message)
            return tree
        if isinstance(tree, dict) and not tree:
            return [message]
        if isinstance(tree, dict):
            tree.setdefault(NON_FIELD, []).append(message)
            return tree
        return [message]
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        if not rest:
            # An error on a primitive list element is reported on the list itself.
            return _insert(tree, (), message)
        if not isinstance(tree, list) or (tree and not isinstance(tree[0], dict)):
            tree = []
        while len(tree) <= head:
            tree.append({})
        tree[head] = _insert(tree[head], rest, message)
        return tree
    if not isinstance(tree, dict):
        tree = {}
    tree[head] = _insert(tree.get(head, {}), rest, message)
    return tree


def errors_from_pydantic(
    errors: Sequence[Mapping[str, Any]], prefix: Sequence[str | int] = ()
) -> dict[str, Any] | list[Any]:
    tree: Any = {}
    for error in errors:
        loc = [p for p in error.get("loc", ()) if isinstance(p, int | str)]
        # Strip pydantic's tags for function validators / unions (e.g. "function-after[...]").
        # The first element is the field's own name, even when it reads like a tag ("list").
        loc = [
            p
            for i, p in enumerate(loc)
            if not (isinstance(p, str) and ("[" in p or (i and p in _TAGS)))
        ]
        path = [*prefix, *loc]
        if path and isinstance(path[-1], int) and _about_object(error):
            # An element of a list of objects that is not a valid object: that element's
            # non_field_errors, so the other elements' errors keep their positions.
            path.append(NON_FIELD)
        if not path:
            path = [NON_FIELD]
        tree = _insert(tree, path, _message(error))
    return tree


def _about_object(error: Mapping[str, Any]) -> bool:
    """Whether the error concerns a whole object (wrong type, or a model-level rule)."""
    kind = error.get("type", "")
    if kind in ("model_type", "model_attributes_type"):
        return True
    return kind in ("value_error", "assertion_error") and isinstance(error.get("input"), Mapping)


_TAGS = {"str", "dict", "list", "int", "bool", "json-or-python", "lax-or-strict", "none"}


def validation_error(exc: ValidationError, prefix: Sequence[str | int] = ()) -> FieldErrors:
    return FieldErrors(errors_from_pydantic(exc.errors(include_url=False), prefix))


class RejectNullCharacters:
    """A NUL character (``%00``) in the path is 404, in the query 400 keyed by parameter.

    Path and query values reach SQL as text parameters, which PostgreSQL refuses with an error.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            response = None
            if "\x00" in scope["path"]:
                response = JSONResponse({"detail": "Not found."}, status_code=404)
            elif b"%00" in scope["query_string"]:
                query = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
                names = [name for name, value in query if "\x00" in name + value]
                if names:
                    response = JSONResponse(
                        {n or NON_FIELD: ["Null characters are not allowed."] for n in names},
                        status_code=400,
                    )
            if response is not None:
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


# Lock timeout, deadlock, serialization failure: the same request may well succeed when retried.
BUSY_SQLSTATES = frozenset({"55P03", "40P01", "40001"})


def busy_error(exc: DBAPIError) -> APIError | None:
    """409 with ``Retry-After`` for a database conflict that a retry resolves, else None."""
    return _busy(exc.orig)


def _busy(orig: BaseException | None) -> APIError | None:
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    text = f"{orig!r} {orig}".lower()
    if state in BUSY_SQLSTATES or "locknotavailable" in text or "lock timeout" in text:
        return APIError(
            409, "The resource is busy right now. Please try again.", headers={"Retry-After": "1"}
        )
    return None


# Server shutting down / crashed / starting up, too many connections; class 08 is "connection
# exception" (refused, broken, does not exist).
UNAVAILABLE_SQLSTATES = frozenset({"57P01", "57P02", "57P03", "53300"})
_NETWORK_ERRNOS = frozenset(
    {
        errno.ECONNREFUSED,
        errno.ECONNRESET,
        errno.ECONNABORTED,
        errno.EHOSTUNREACH,
        errno.ENETUNREACH,
        errno.ETIMEDOUT,
        errno.EPIPE,
    }
)
# Seconds a client is asked to wait: a PostgreSQL restart or failover takes a few.
UNAVAILABLE_RETRY_AFTER = "2"
_last_outage_warning = 0.0


def _lost_database(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it wraps) says the database cannot be reached right now."""
    current: BaseException | None = exc
    for _ in range(6):  # the wrappers: SQLAlchemy's error, its DBAPI adapter's, the driver's
        if current is None:
            return False
        if isinstance(current, DBAPIError) and current.connection_invalidated:
            return True
        state = getattr(current, "sqlstate", None)
        if isinstance(state, str) and (state.startswith("08") or state in UNAVAILABLE_SQLSTATES):
            return True
        if isinstance(current, ConnectionError | TimeoutError | socket.gaierror):
            return True
        if isinstance(current, OSError) and current.errno in _NETWORK_ERRNOS:
            return True
        if isinstance(current, asyncpg.InterfaceError) and "connection is closed" in str(current):
            return True
        if isinstance(current, asyncpg.InternalClientError):
            # How asyncpg reports a connection the server ended in the middle of an operation
            # (seen in every PostgreSQL restart under load): "cannot switch to state …".
            return True
        current = current.orig if isinstance(current, DBAPIError) else current.__cause__
    return False


def database_unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the database, or a pooled connection to it, cannot be had now."""
    return isinstance(exc, PoolTimeoutError) or _lost_database(exc)


def unavailable_error(exc: BaseException) -> APIError | None:
    """503 with ``Retry-After`` when the database is out of reach or no pooled connection
    came free in time (``ADMIT_DB_POOL_TIMEOUT``), else None."""
    if isinstance(exc, PoolTimeoutError):
        detail = "The server is too busy to answer right now. Please try again shortly."
    elif _lost_database(exc):
        detail = "The database is unavailable right now. Please try again shortly."
    else:
        return None
    global _last_outage_warning
    now = time.monotonic()
    if now - _last_outage_warning > 1.0:  # one line a second, not one per failed request
        _last_outage_warning = now
        log.warning("answering 503: %s (%s: %s)", detail, type(exc).__name__, exc)
    return APIError(503, detail, headers={"Retry-After": UNAVAILABLE_RETRY_AFTER})


def database_error(exc: BaseException) -> APIError | None:
    """The answer to a database failure a retry may resolve (409 busy, 503 unavailable)."""
    busy = busy_error(exc) if isinstance(exc, DBAPIError) else None
    if busy is None and isinstance(exc, asyncpg.PostgresError):
        busy = _busy(exc)
    return busy or unavailable_error(exc)


def database_error_response(exc: BaseException) -> JSONResponse | None:
    """:func:`database_error` as a response (for the fast lane), or None."""
    error = database_error(exc)
    return error_response(error) if error is not None else None


def error_response(exc: APIError | FieldErrors) -> JSONResponse:
    if isinstance(exc, APIError):
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)
    return JSONResponse(exc.errors, status_code=exc.status)


def server_error(method: str, path: str) -> JSONResponse:
    log.exception("unhandled error on %s %s", method, escape_controls(path))
    return JSONResponse({"detail": "Internal server error."}, status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    app.add_middleware(RejectNullCharacters)

    @app.exception_handler(APIError)
    async def _api_error(_request: Request, exc: APIError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(FieldErrors)
    async def _field_errors(_request: Request, exc: FieldErrors) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(ValidationError)
    async def _pydantic(_request: Request, exc: ValidationError) -> JSONResponse:
        return JSONResponse(errors_from_pydantic(exc.errors(include_url=False)), status_code=400)

    @app.exception_handler(RequestValidationError)
    async def _request_validation(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # Query/path parameters declared on routes: drop the "query"/"path" location prefix.
        errors = []
        for error in exc.errors():
            loc = list(error.get("loc", ()))
            if loc and loc[0] in ("query", "path", "header", "body", "cookie"):
                loc = loc[1:]
            errors.append({**error, "loc": tuple(loc)})
        return JSONResponse(errors_from_pydantic(errors), status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail
        if exc.status_code == 404 and detail == "Not Found":
            detail = "Not found."
        headers = exc.headers
        if exc.status_code == 405:
            detail = f'Method "{_request.method}" not allowed.'
            # The methods OPTIONS names (HEAD and OPTIONS included): the two never disagree.
            from admit.kit.http.methods import allowed_methods

            if allowed := allowed_methods(_request.app, _request.url.path):
                headers = {**(headers or {}), "Allow": ", ".join(allowed)}
        return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=headers)

    # The driver's and the network's own errors reach here raw from the native fast-read pool;
    # SQLAlchemy's pool raises its TimeoutError when no connection came free in time.
    @app.exception_handler(DBAPIError)
    @app.exception_handler(PoolTimeoutError)
    @app.exception_handler(asyncpg.PostgresError)
    @app.exception_handler(asyncpg.InterfaceError)
    # Not an InterfaceError: a handler of plain Exception would answer it but Starlette
    # re-raises what that handler saw, and the server logs a traceback for an outage.
    @app.exception_handler(asyncpg.InternalClientError)
    @app.exception_handler(OSError)
    async def _database(request: Request, exc: Exception) -> JSONResponse:
        answer = database_error_response(exc)
        if answer is not None:
            return answer
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            path = escape_controls(request.url.path)
            log.error("no space left on %s %s: %s", request.method, path, exc)
            detail = "The server has no space left to store this. Please try again later."
            return JSONResponse({"detail": detail}, status_code=507)
        return server_error(request.method, request.url.path)

    @app.exception_handler(ClientDisconnect)
    async def _gone(_request: Request, _exc: ClientDisconnect) -> JSONResponse:
        # Nobody is listening any more; the transaction was rolled back. Not a server error.
        return JSONResponse({"detail": "Client disconnected."}, status_code=400)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # An error raised from a lost database connection is no server error either.
        return database_error_response(exc) or server_error(request.method, request.url.path)
