"""Rendering back-office pages: their own Jinja2 templates and stylesheet, the security headers
of every page (no script, no inline style: ``script-src 'none'``), the session cookie saved."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from importlib.resources import files
from typing import Any

from fastapi import APIRouter
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse, Response

from admit.web import sessions
from admit.web.page import Page
from admit.web.render import SECURITY_HEADERS

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


_env = Environment(
    loader=PackageLoader("admit.control", "templates"),
    autoescape=select_autoescape(default=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
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
) -> HTMLResponse:
    """The page as HTML with the session's CSRF token, user and flash message; ``scripts``
    lets it load this site's script files (no inline script either way)."""
    html = _env.get_template(template).render(
        csrf_token=page.web.csrf, user=page.user, flash=page.web.pop_flash(), **context
    )
    headers = SCRIPT_HEADERS if scripts else SECURITY_HEADERS
    response = HTMLResponse(html, status_code=status, headers=headers)
    sessions.save(page.request, response, page.web)
    return response


static_router = APIRouter(include_in_schema=False)
_CSS = files("admit.control").joinpath("static/control.css").read_bytes()
_JS = files("admit.control").joinpath("static/live.js").read_bytes()


@static_router.get("/control/static/control.css")
async def stylesheet() -> Response:
    return Response(
        _CSS,
        media_type="text/css",
        headers={"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"},
    )


@static_router.get("/control/static/live.js")
async def live_script() -> Response:
    return Response(
        _JS,
        media_type="text/javascript",
        headers={"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"},
    )
