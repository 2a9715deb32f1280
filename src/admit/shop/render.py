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
from admit.shop import i18n
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


def language(web: Page, event: Event | None, offered: list[str] | None = None) -> str:
    """The page's language (``i18n.choose``; on a page of no one event, the first of
    ``offered`` asked or remembered); a valid ``?lang=`` is remembered in the web session."""
    asked = web.request.query_params.get("lang")
    if event is None:
        choices = offered or ["en"]
        remembered = web.web.get("lang")
        lang = next((c for c in (asked, remembered) if c in choices), choices[0])
    else:
        lang = i18n.choose(event, asked, web.web.get("lang"))
    if asked and asked == lang:
        web.web.set("lang", lang)
    return lang


def page(
    web: Page, template: str, status: int = 200, *, offered: list[str] | None = None, **context: Any
) -> Response:
    """The shop page ``template``; ``offered``: the languages of a page of no one event (the
    customer account's), English alone by default."""
    context.setdefault("errors", [])
    context.setdefault("home", False)
    event = context.get("event")
    lang = language(web, event, offered)
    _ = i18n.translator(lang)
    context["errors"] = [translate_sentence(_, e) for e in context["errors"]]
    offered = i18n.offered(event) if event is not None else (offered or ["en"])
    return web.render(
        template,
        status,
        env=_env,
        headers=SHOP_HEADERS,
        _=_,
        lang=lang,
        languages=[(c, i18n.LANGUAGES[c]) for c in offered] if len(offered) > 1 else [],
        path=web.request.url.path,
        **context,
    )


def translate_sentence(_: Any, sentence: str) -> str:
    """A refusal as ``pages.sentences`` writes it (labels joined by en dashes, a colon, the
    message), each part translated where the catalogue knows it."""
    if _(sentence) != sentence:
        return _(sentence)
    prefix, sep, message = sentence.rpartition(": ")
    if not sep:
        return sentence
    labels = " – ".join(_(part) for part in prefix.split(" – "))
    return f"{labels}: {_(message)}"


def base_context(event: Event, organizer: str) -> dict[str, Any]:
    return {
        "event": event,
        "event_name": localized(event.name, "en"),
        "organizer_name": event.organizer_name,  # type: ignore[attr-defined]
        "shop_url": f"/{organizer}/{event.slug}/",
        "contact": value(event, "contact_mail"),
        "imprint": value(event, "imprint_url"),
        "account_url": getattr(event, "account_url", None),
    }


static_router = APIRouter(include_in_schema=False)
serve_static(static_router, "/static/shop.css", "admit.shop", "shop.css", "text/css")
serve_static(
    static_router, "/static/shop-timer.js", "admit.shop", "shop-timer.js", "text/javascript"
)
