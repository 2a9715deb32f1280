"""Rendering the shop's pages: their own templates and stylesheet, the security headers every
page has (``web/render.py``: no script at all, so no ``unsafe-inline``), the web session's
cookie (the cart id and the CSRF token live there)."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from fastapi import APIRouter
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse, Response

from admit.events.settings import value
from admit.kit.resources.i18n import localized
from admit.models import Event
from admit.web import sessions
from admit.web.page import Page
from admit.web.render import SECURITY_HEADERS

_env = Environment(
    loader=PackageLoader("admit.shop", "templates"),
    autoescape=select_autoescape(default=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def page(web: Page, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    context.setdefault("errors", [])
    context.setdefault("home", False)
    html = _env.get_template(template).render(
        csrf_token=web.web.csrf, flash=web.web.pop_flash(), **context
    )
    response = HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)
    sessions.save(web.request, response, web.web)
    return response


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
_CSS = files("admit.shop").joinpath("static/shop.css").read_bytes()


@static_router.get("/static/shop.css")
async def stylesheet() -> Response:
    return Response(
        _CSS,
        media_type="text/css",
        headers={"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"},
    )
