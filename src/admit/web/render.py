"""Rendering pages: the Jinja2 environment (autoescaping), security headers, the stylesheet."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from fastapi import APIRouter
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse, Response

_env = Environment(
    loader=PackageLoader("admit.web", "templates"),
    autoescape=select_autoescape(default=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)

# No scripts at all, nothing from elsewhere, never inside a frame (the consent page must not
# be clickjacked); links carry no referrer (reset and invite links hold secrets).
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'none'; frame-ancestors 'none'; "
    "base-uri 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


def render(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = _env.get_template(template).render(context)
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


static_router = APIRouter(include_in_schema=False)
_CSS = files("admit.web").joinpath("static/admit.css").read_bytes()


@static_router.get("/static/admit.css")
async def stylesheet() -> Response:
    return Response(
        _CSS,
        media_type="text/css",
        headers={"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"},
    )
