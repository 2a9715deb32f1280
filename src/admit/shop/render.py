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
from admit.web.render import page_environment, serve_static

_env = page_environment("admit.shop")


def page(web: Page, template: str, status: int = 200, **context: Any) -> Response:
    context.setdefault("errors", [])
    context.setdefault("home", False)
    return web.render(template, status, env=_env, **context)


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
