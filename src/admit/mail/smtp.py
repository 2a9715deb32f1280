"""Talking to the SMTP server named by ``ADMIT_SMTP_URL``.

``smtp://[user:password@]host[:port][?starttls=true|false&timeout=30&verify=true]`` connects in
plain text and upgrades with STARTTLS when the server offers it (``starttls=true`` insists on
it, ``starttls=false`` never tries); ``smtps://`` speaks TLS from the first byte (port 465).
The port defaults to 25 (587 with ``starttls=true``).

Every failure is sorted into one of two kinds, because that decides what happens to the mail:
a :class:`TemporaryFailure` (4xx answers, the server unreachable, slow or gone, a
misconfiguration an operator can fix) is tried again later; a :class:`PermanentFailure`
(5xx answers about this message: recipients or sender refused, content rejected) never is.
"""

from __future__ import annotations

import email.message
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

import aiosmtplib

DEFAULT_TIMEOUT = 30.0
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class TemporaryFailure(Exception):
    """Sending may work later; the message is the server's answer or what went wrong."""


class PermanentFailure(Exception):
    """The server refused this message for good; the message is its answer."""


@dataclass(frozen=True)
class SmtpServer:
    hostname: str
    port: int | None
    username: str | None
    password: str | None
    use_tls: bool
    start_tls: bool | None
    timeout: float
    validate_certs: bool


def _flag(name: str, value: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ValueError(f"{name} must be true or false, not {value!r}")


def parse_smtp_url(url: str) -> SmtpServer:
    """Reads the server from the URL; a ValueError says what is wrong with it (the URL holds
    a password, so the message never repeats the whole URL)."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("smtp", "smtps"):
        raise ValueError("ADMIT_SMTP_URL must start with smtp:// or smtps://")
    if not parts.hostname:
        raise ValueError("ADMIT_SMTP_URL names no host")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("ADMIT_SMTP_URL has an invalid port") from None
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = set(options) - {"starttls", "timeout", "verify"}
    if unknown:
        raise ValueError(f"ADMIT_SMTP_URL has unknown options: {', '.join(sorted(unknown))}")
    implicit_tls = parts.scheme == "smtps"
    start_tls = _flag("starttls", options["starttls"]) if "starttls" in options else None
    if implicit_tls and start_tls:
        raise ValueError("smtps:// already speaks TLS; starttls=true is for smtp://")
    try:
        timeout = float(options.get("timeout", DEFAULT_TIMEOUT))
    except ValueError:
        raise ValueError("timeout must be a number of seconds") from None
    if not 0 < timeout <= 600:
        raise ValueError("timeout must be between 0 and 600 seconds")
    if port is None:
        port = 465 if implicit_tls else 587 if start_tls else 25
    return SmtpServer(
        hostname=parts.hostname,
        port=port,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password is not None else None,
        use_tls=implicit_tls,
        start_tls=False if implicit_tls else start_tls,
        timeout=timeout,
        validate_certs=_flag("verify", options.get("verify", "true")),
    )


def _answer(exc: aiosmtplib.SMTPResponseException) -> str:
    return f"{exc.code} {exc.message}".strip()


async def deliver(
    server: SmtpServer,
    message: email.message.EmailMessage,
    *,
    sender: str,
    recipients: Sequence[str],
) -> dict[str, str]:
    """Sends the message; returns the recipients the server refused while it accepted others
    (address: answer). Raises TemporaryFailure or PermanentFailure otherwise."""
    try:
        refused, _ = await aiosmtplib.send(
            message,
            sender=sender,
            recipients=list(recipients),
            hostname=server.hostname,
            port=server.port,
            username=server.username,
            password=server.password,
            use_tls=server.use_tls,
            start_tls=server.start_tls,
            timeout=server.timeout,
            validate_certs=server.validate_certs,
        )
    except aiosmtplib.SMTPRecipientsRefused as exc:
        answers = "; ".join(f"{r.recipient}: {_answer(r)}" for r in exc.recipients)
        if exc.recipients and all(400 <= r.code < 500 for r in exc.recipients):
            raise TemporaryFailure(answers) from None
        raise PermanentFailure(answers) from None
    except (aiosmtplib.SMTPAuthenticationError, aiosmtplib.SMTPHeloError) as exc:
        # About our connection, not this message: an operator can fix it, so try again.
        raise TemporaryFailure(_answer(exc)) from None
    except aiosmtplib.SMTPResponseException as exc:
        if 500 <= exc.code < 600:
            raise PermanentFailure(_answer(exc)) from None
        raise TemporaryFailure(_answer(exc)) from None
    except (aiosmtplib.SMTPException, OSError) as exc:
        # Unreachable, timed out, disconnected, TLS failed, STARTTLS or AUTH not offered.
        raise TemporaryFailure(f"{type(exc).__name__}: {exc}") from None
    return {address: f"{answer.code} {answer.message}" for address, answer in refused.items()}
