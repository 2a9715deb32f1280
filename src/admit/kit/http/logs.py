"""Logs: a request id on every answer and every log line, an access line per request, text or
JSON lines, and no secret in any of them.

The request id comes from a sane ``X-Request-ID`` (a proxy or client that set one can find
its request in our logs) or is made here; it is answered on every response and put on every
log record emitted while the request runs (a context variable, so code deep inside needs no
parameter). Log lines are scrubbed as they are formatted: credentials after an auth scheme,
secret-looking query parameters and JSON fields, secret path segments and SQL parameters in
database errors are replaced, so a careless ``log.info`` or an exception text cannot carry a
token into a log file.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import logging
import logging.config
import os
import re
import time
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from admit.config import Settings

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("admit_request_id", default="-")
# Where the request id also lives in the ASGI scope (for code that has the scope).
SCOPE_KEY = "admit.request_id"
ACCESS_LOGGER = "admit.access"
# A record attribute: every part of the record is scrubbed already (the access lines).
SCRUBBED = "admit_scrubbed"

# Up to 128 of the characters ids are usually made of (UUIDs, hex, base64, trace ids).
_SANE_ID = re.compile(rb"[A-Za-z0-9._:+/=@-]{1,128}")
REDACTED = "[redacted]"

# Names whose values are secrets (or, for searches, often personal).
_SECRET_WORD = re.compile(
    r"(?i)token|secret|password|passwd|code|key|signature|verifier|state|client_id|session"
    r"|csrf|auth|search"
)
# key=value pairs in query strings and form bodies (names never hold a slash: paths stay one
# cheap run), and "key": "value" in JSON or Python reprs.
_PAIR = re.compile(r"([^=&\s\"'?;,/]+)=([^&\s\"',;]+)")
_QUOTED_PAIR = re.compile(r"((['\"])([^'\"\s]{1,80})\2\s*:\s*)(['\"])[^'\"]*\4")
_SCRUBBERS: tuple[tuple[re.Pattern[str], str], ...] = (
    # A credential after its scheme: "Token abc", "Authorization: Device abc", "Bearer abc".
    (
        re.compile(r"(?i)\b(token|device|bearer|basic|customer)(\s+)[A-Za-z0-9._~+/=-]{16,}"),
        r"\1\2" + REDACTED,
    ),
    # Paths holding a secret: reset and invitation links (a customer account's password link
    # too), job and export downloads.
    (re.compile(r"(/(?:password-reset|invite|account/password)/)[^/\s?\"']+"), r"\1" + REDACTED),
    (re.compile(r"(/download/)[^\s?\"']+"), r"\1" + REDACTED),
    # SQLAlchemy puts the statement's parameters into a database error's text.
    (re.compile(r"\[parameters: [^\n]*"), "[parameters: " + REDACTED + "]"),
)


def _pair(found: re.Match[str]) -> str:
    if _SECRET_WORD.search(found.group(1)):
        return f"{found.group(1)}={REDACTED}"
    return found.group(0)


def _quoted_pair(found: re.Match[str]) -> str:
    if _SECRET_WORD.search(found.group(3)):
        quote = found.group(4)
        return f"{found.group(1)}{quote}{REDACTED}{quote}"
    return found.group(0)


# What each of the scrubbers needs in a text before it can match (most texts, request
# targets above all, have none of it: the checks cost less than running the patterns).
_SPACE = re.compile(r"\s")
_SECRET_PATHS = ("/password-reset/", "/invite/", "/download/", "/account/password/")


def scrub(text: str) -> str:
    """``text`` with every secret-looking part replaced by ``[redacted]``."""
    if _SPACE.search(text) is not None or any(part in text for part in _SECRET_PATHS):
        for pattern, replacement in _SCRUBBERS:
            text = pattern.sub(replacement, text)
    if "=" in text:
        text = _PAIR.sub(_pair, text)
    if ":" in text and ("'" in text or '"' in text):
        text = _QUOTED_PAIR.sub(_quoted_pair, text)
    return text


# Characters a log line must never carry as they are: line breaks (a path with %0a would
# forge a line of its own), other C0/C1 controls (terminal escapes: %1b), the Unicode line
# separators, and the backslash that starts an escape (so an escape cannot be faked either).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\\\\]")


def _escaped(found: re.Match[str]) -> str:
    char = found.group(0)
    if char == "\\":
        return "\\\\"
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """``text`` with control characters (and backslashes) written as ``\\xNN`` escapes:
    whatever a client puts into its request, a log line stays one line of plain text."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_escaped, text)


def safe_target(path: str, query: bytes) -> str:
    """The request target as logged: control characters escaped (the path arrives
    percent-decoded), secret path segments and query values replaced."""
    if query:
        path = f"{path}?{query.decode('latin-1')}"
    return scrub(escape_controls(path))


def _request_id(scope: Scope) -> str:
    """The client's id when it is sane and nothing in it looks like a secret (so lines that
    carry it need no scrubbing for its sake), else a new one."""
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            if _SANE_ID.fullmatch(value):
                given = value.decode("ascii")
                if scrub(given) == given:
                    return given
            break
    return os.urandom(16).hex()


def request_log_layer(app: ASGIApp, settings: Settings) -> ASGIApp:
    """The outermost edge layer: the request id (answered as ``X-Request-ID``) and, when the
    access logger is on, one line per request once the answer is complete."""
    access = logging.getLogger(ACCESS_LOGGER)
    logged = settings.access_log

    async def layer(scope: Scope, receive: Receive, send: Send) -> None:
        request_id = _request_id(scope)
        scope[SCOPE_KEY] = request_id
        reset = REQUEST_ID.set(request_id)
        id_header = (b"x-request-id", request_id.encode("ascii"))
        status = 0
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), id_header]
            await send(message)

        try:
            await app(scope, receive, send_with_id)
        except BaseException:
            status = status or 500
            raise
        finally:
            if logged and access.isEnabledFor(logging.INFO):
                _access_line(access, scope, status, time.perf_counter() - started)
            REQUEST_ID.reset(reset)

    return layer


def _access_line(access: logging.Logger, scope: Scope, status: int, seconds: float) -> None:
    target = safe_target(scope["path"], scope["query_string"])
    client = scope.get("client")
    duration_ms = round(seconds * 1000, 2)
    # Every part of the line is clean already (the target scrubbed, the request id checked
    # when it was taken): the formatters need not scrub it again.
    access.info(
        "%s %s %d %.2fms",
        scope["method"],
        target,
        status,
        duration_ms,
        extra={
            "method": scope["method"],
            "path": target,
            "status": status,
            "duration_ms": duration_ms,
            "client": client[0] if client else None,
            SCRUBBED: True,
        },
    )


class RequestIdFilter(logging.Filter):
    """Puts the running request's id on every record (``-`` outside requests)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


class TextFormatter(logging.Formatter):
    """``time level logger [request id] message``, scrubbed."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "request_id"):
            record.request_id = REQUEST_ID.get()
        line = super().format(record)
        return line if getattr(record, SCRUBBED, False) else scrub(line)


# Attributes every LogRecord has; anything else came in through ``extra=`` and is a field.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "request_id",
    "taskName",
    SCRUBBED,
}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request_id, the record's
    extra fields and the exception, scrubbed."""

    def format(self, record: logging.LogRecord) -> str:
        clean = getattr(record, SCRUBBED, False)
        message = record.getMessage()
        line: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": message if clean else scrub(message),
            "request_id": getattr(record, "request_id", None) or REQUEST_ID.get(),
        }
        for name, value in vars(record).items():
            if name not in _STANDARD and name not in line:
                line[name] = scrub(value) if isinstance(value, str) and not clean else value
        if record.exc_info:
            line["exc"] = scrub(self.formatException(record.exc_info))
        elif record.exc_text:
            line["exc"] = scrub(record.exc_text)
        return orjson.dumps(line, default=str).decode()


def logging_config(settings: Settings) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for the server (uvicorn takes it as ``log_config``):
    Admit's loggers at ``ADMIT_LOG_LEVEL`` (the access log at INFO when on), everything through
    one stderr handler in the chosen format."""
    formatter = "json" if settings.log_format == "json" else "text"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": RequestIdFilter}},
        "formatters": {
            "text": {"()": TextFormatter},
            "json": {"()": JsonFormatter},
        },
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": formatter,
                "filters": ["request_id"],
            }
        },
        "root": {"level": "WARNING", "handlers": ["stderr"]},
        "loggers": {
            "admit": {"level": settings.log_level.upper()},
            ACCESS_LOGGER: {"level": "INFO" if settings.access_log else "WARNING"},
            # Start, stop and worker replacement: a few lines a run, always worth having.
            "admit.serving": {"level": "INFO"},
            # uvicorn's own lines go through the same handler; its access log is ours.
            "uvicorn": {"level": "INFO", "handlers": [], "propagate": True},
            "uvicorn.error": {"level": "INFO", "propagate": True},
            "uvicorn.access": {"level": "WARNING", "propagate": False},
        },
    }


def configure_logging(settings: Settings | None = None) -> None:
    """Applies :func:`logging_config` to this process (the server's supervisor, workers)."""
    logging.config.dictConfig(logging_config(settings or Settings()))


def uvicorn_log_config() -> dict[str, Any]:
    """The logging config from the environment's settings (for ``admit serve``)."""
    return logging_config(Settings())
