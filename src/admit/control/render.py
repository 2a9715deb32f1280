"""Rendering back-office pages: their own Jinja2 templates and stylesheet, the security headers
of every page (no script, no inline style: ``script-src 'none'``), the session cookie saved."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from admit.web.page import Page
from admit.web.render import SECURITY_HEADERS, page_environment, serve_static

STATUS_LABELS = {"n": "pending", "p": "paid", "e": "expired", "c": "canceled"}


def text_of(value: Any, locale: str = "en") -> str:
    """A multi-language field (``{"en": ...}``) as one text: the locale's, else the first."""
    if isinstance(value, dict):
        return str(value.get(locale) or next(iter(value.values()), "") or "")
    return "" if value is None else str(value)


def when(value: dt.datetime | None) -> str:
    """A moment as people read it on these pages (UTC, to the minute)."""
    if value is None:
        return "—"
    value = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    return f"{value.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC"


def money(value: Decimal | int | float | None, currency: str = "") -> str:
    amount = Decimal(value or 0).quantize(Decimal("0.01"))
    text = f"{amount:,.2f}"
    return f"{text} {currency}".strip()


_env = page_environment("admit.control")
_env.filters.update(i18n=text_of, when=when, money=money)
_env.globals.update(status_labels=STATUS_LABELS)


# A page that refreshes itself may run this site's own scripts, still never inline ones.
SCRIPT_HEADERS = {
    **SECURITY_HEADERS,
    "Content-Security-Policy": SECURITY_HEADERS["Content-Security-Policy"].replace(
        "script-src 'none'", "script-src 'self'"
    ),
}


def render(
    page: Page, template: str, status: int = 200, *, scripts: bool = False, **context: Any
) -> Response:
    """The page as HTML with the session's CSRF token, user and flash message; ``scripts``
    lets it load this site's script files (no inline script either way)."""
    headers = SCRIPT_HEADERS if scripts else SECURITY_HEADERS
    return page.render(template, status, env=_env, headers=headers, **context)


static_router = APIRouter(include_in_schema=False)
serve_static(
    static_router, "/control/static/control.css", "admit.control", "control.css", "text/css"
)
serve_static(
    static_router, "/control/static/live.js", "admit.control", "live.js", "text/javascript"
)
serve_static(
    static_router, "/control/static/exports.js", "admit.control", "exports.js", "text/javascript"
)
