"""Rendering the shop's pages: their own templates and stylesheet, the security headers every
page has (``web/render.py``: no script at all, so no ``unsafe-inline``), the web session's
cookie (the cart id and the CSRF token live there)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from admit.events.settings import value
from admit.kit.resources.i18n import localized
from admit.models import Event
from admit.web.page import Page
from admit.web.render import SECURITY_HEADERS, page_environment, serve_static

_env = page_environment("admit.shop")


# The pages' headers (``web/render.py``) with one script allowed: the shop's own cart timer,
# served from here (no inline script, so still no ``unsafe-inline``).
SHOP_HEADERS = {
    **SECURITY_HEADERS,
    "Content-Security-Policy": SECURITY_HEADERS["Content-Security-Policy"].replace(
        "script-src 'none'", "script-src 'self'"
    ),
}


def page(web: Page, template: str, status: int = 200, **context: Any) -> Response:
    context.setdefault("errors", [])
    context.setdefault("home", False)
    return web.render(template, status, env=_env, headers=SHOP_HEADERS, **context)


def base_context(event: Event, organizer: str) -> dict[str, Any]:
    return {
        "event": event,
        "event_name": localized(event.name, "en"),
        "organizer_name": event.organizer_name,  # type: ignore[attr-defined]
        "shop_url": f"/{organizer}/{event.slug}/",
        "contact": value(event, "contact_mail"),
        "imprint": value(event, "imprint_url"),
    }


static_router = APIRouter(include_in_schema=False)
serve_static(static_router, "/static/shop.css", "admit.shop", "shop.css", "text/css")
serve_static(
    static_router, "/static/shop-timer.js", "admit.shop", "shop-timer.js", "text/javascript"
)
