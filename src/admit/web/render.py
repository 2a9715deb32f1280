"""Rendering pages: the Jinja2 environment (autoescaping), security headers, the stylesheet."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from fastapi import APIRouter
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse, Response


def page_environment(package: str) -> Environment:
    """The Jinja2 environment every set of pages uses (web, shop, back office): templates from
    the package's ``templates`` folder, everything escaped, a missing name an error rather than
    an empty string."""
    return Environment(
        loader=PackageLoader(package, "templates"),
        autoescape=select_autoescape(default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


_env = page_environment("admit.web")

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


def render(
    template: str,
    status: int = 200,
    *,
    env: Environment | None = None,
    headers: dict[str, str] = SECURITY_HEADERS,
    **context: Any,
) -> HTMLResponse:
    """The template as an HTML answer with the pages' security headers; ``env`` names another
    set of pages' templates (shop, back office), ``headers`` another policy."""
    html = (env or _env).get_template(template).render(context)
    return HTMLResponse(html, status_code=status, headers=headers)


def serve_static(router: APIRouter, url: str, package: str, name: str, media_type: str) -> None:
    """Serves one file of a package's ``static`` folder at ``url``: read once at import, cached
    by browsers for an hour."""
    body = files(package).joinpath(f"static/{name}").read_bytes()
    headers = {"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"}

    async def static_file() -> Response:
        return Response(body, media_type=media_type, headers=headers)

    router.add_api_route(url, static_file, methods=["GET"], name=f"static:{package}:{name}")


static_router = APIRouter(include_in_schema=False)
serve_static(static_router, "/static/admit.css", "admit.web", "admit.css", "text/css")
