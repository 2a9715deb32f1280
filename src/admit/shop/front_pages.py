"""The shop's front page kept per worker: rendered once, answered from memory for a while.

At an on-sale thousands of visitors open the event's front page (``GET /{o}/{e}/``, a date of
a series ``/{o}/{e}/{date}/``) again and again, and rendering it (event, catalog, the quotas'
availability, the template) costs ~7.5 ms of worker CPU: a few hundred pages a second. Nearly
all of those visitors see the same bytes — they have no cart, no voucher and no message yet.
So a worker keeps the last page it rendered for such a *plain* visitor, per path and chosen
language, and answers it again to the next plain visitor without touching the database.

**What stays per visitor.** The only per-visitor part of the page is the session's CSRF
token in its forms: the kept bytes are split where the token of the visitor the page was
rendered for stood (a random 43-character token: it occurs nowhere else), and each answer
puts in the visitor's own token; a first-time visitor gets a fresh one and the signed session
cookie carrying it (``web/sessions.py``: sessions live in the cookie, so a new visitor costs
no database write at all). The add-to-cart POST checks that token against the cookie as
ever. Security headers and the CSP are the rendered page's. Visitors with a cart for the
event, a flash message, a login, or a query string naming ``voucher`` or ``lang`` (which
change the page or the session) are rendered as ever, and their pages are not kept.

**How fresh.** A kept page is answered while it is younger than ``ADMIT_SHOP_PAGE_SECONDS``
(:attr:`KeptFronts.fresh`, default 1 s). Once older, the next plain visitor renders it anew
(and keeps that) while the others are still answered the kept page — for at most another
``fresh`` seconds, so one render replaces it instead of one per waiting visitor. So
**whatever the page shows — availability ("left", "sold out", "reserved"), the catalog
(names, prices, products), the event's settings and texts, the date, the sale windows and
the shop being closed — is at most twice ``fresh`` seconds older than the database** in
each worker (counted from before the render's first statement). Nothing is read to prove a
kept page current: sales move availability with every cart, so a stamp of them would change
as often as the page is asked for, and a statement per answer would add a database round
trip to an answer that now costs ~0.35 ms of worker CPU. (The catalog stamp still spares
each re-render the catalog's rows, ``catalog._catalog_rows``.) The staleness is safe because
the page promises nothing: the cart checks product, window and quota under the quota lock
and refuses a sold-out product with a sentence on the page, as for a buyer a second late.
``ADMIT_SHOP_PAGE_SECONDS=0`` keeps no page.

On PostgreSQL a lane in front of the framework answers kept pages (``app.py``), so a kept
answer costs neither routing nor a database session; the route answers them too (SQLite,
requests with other query parameters). Only paths the front page routes rendered are ever
kept, so the lane's broad path template answers nothing else.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from markupsafe import escape
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

from admit.kit.http.context import public_base_url
from admit.kit.http.errors import FieldErrors
from admit.kit.lanes.fastlane import LaneRequest
from admit.kit.stamps.pagecache import query_names
from admit.models import Event
from admit.web import sessions
from admit.web.page import Page

# Query parameters that change the page or the session: their requests are rendered.
PERSONAL_QUERY = frozenset({"voucher", "lang"})
# Web session keys that make a page personal (a login, a message shown once).
PERSONAL_SESSION = ("u", "flash")
_DROPPED_HEADERS = frozenset({b"set-cookie", b"content-length"})
_TRIED = "admit.front_page_tried"  # in the scope: asked once, not again by the route
MAX_BYTES = 8 * 1024 * 1024  # kept per worker; the least recently kept pages go first


def clock() -> float:
    """The kept pages' clock (``time.monotonic``; the tests move it)."""
    return time.monotonic()


def cart_key(event_id: int) -> str:
    """The web session's key of the visitor's cart for the event (``pages._cart_key``)."""
    return f"cart{event_id}"


@dataclass
class Kept:
    """A kept page: its body cut where the CSRF token stood, its headers (no cookie), the
    event it shows and when its rendering began (:func:`clock`)."""

    parts: list[bytes]
    headers: list[tuple[bytes, bytes]]
    event_id: int
    born: float
    claimed: float | None = None  # when a visitor set out to render it anew

    @property
    def size(self) -> int:
        return sum(len(part) for part in self.parts)

    def answer(self, token: str) -> Response:
        # Escaped as the template escapes it (a token is URL-safe; a cookie is only trusted
        # as far as its signature, and the page is HTML).
        body = str(escape(token)).encode().join(self.parts)
        response = Response(body)
        response.raw_headers = [*self.headers, (b"content-length", str(len(body)).encode())]
        return response


class KeptFronts:
    """One worker's kept front pages, by (root path, path, remembered language)."""

    def __init__(self, fresh: float) -> None:
        self.fresh = fresh
        self.pages: OrderedDict[tuple[Any, ...], Kept] = OrderedDict()
        self.size = 0  # bytes kept
        self.hits = 0  # answers given from kept pages
        self.renders = 0  # pages kept

    @property
    def enabled(self) -> bool:
        return self.fresh > 0

    def usable(self, key: tuple[Any, ...], now: float) -> Kept | None:
        """The kept page for ``key`` if it may still be answered: fresh, or stale within
        ``fresh`` more while another visitor renders it anew (the first visitor to find it
        stale claims that render and gets None)."""
        kept = self.pages.get(key)
        if kept is None:
            return None
        age = now - kept.born
        if age < self.fresh:
            return kept
        if age < 2 * self.fresh and kept.claimed is not None and now - kept.claimed < self.fresh:
            return kept
        kept.claimed = now
        return None

    def put(self, key: tuple[Any, ...], kept: Kept) -> None:
        self.drop(key)
        self.pages[key] = kept
        self.size += kept.size
        self.renders += 1
        while self.size > MAX_BYTES:
            _key, old = self.pages.popitem(last=False)
            self.size -= old.size

    def drop(self, key: tuple[Any, ...]) -> None:
        old = self.pages.pop(key, None)
        if old is not None:
            self.size -= old.size

    def clear(self) -> None:
        self.pages.clear()
        self.size = 0


def store(app: Any) -> KeptFronts:
    """The application's kept front pages (one store per worker's application)."""
    found: KeptFronts | None = getattr(app.state, "shop_pages", None)
    if found is None:
        found = KeptFronts(float(app.state.settings.shop_page_seconds))
        app.state.shop_pages = found
    return found


def _plain_query(raw: bytes) -> bool:
    names = query_names(raw)
    return names is not None and not names & PERSONAL_QUERY


def _key(request: Request, web: sessions.WebSession) -> tuple[Any, ...]:
    scope = request.scope
    return (scope.get("root_path", ""), scope["path"], web.get("lang"))


def _plain_session(web: sessions.WebSession) -> bool:
    return all(web.get(name) is None for name in PERSONAL_SESSION)


def answer(request: Request) -> Response | None:
    """The kept page for a plain visitor (with their CSRF token and session cookie), or None:
    the page is to be rendered (and, for a plain visitor, kept by :func:`keep`)."""
    kept_pages = store(request.app)
    if not kept_pages.enabled or request.method not in ("GET", "HEAD"):
        return None
    if request.scope.get(_TRIED):
        return None  # the lane asked already (and perhaps claimed the render)
    request.scope[_TRIED] = True
    if not _plain_query(request.scope["query_string"]):
        return None
    try:
        public_base_url(request)  # a refused Host is answered by the route (400)
    except FieldErrors:
        return None
    web = sessions.load(request)
    if not _plain_session(web):
        return None
    kept = kept_pages.usable(_key(request, web), clock())
    if kept is None or web.get(cart_key(kept.event_id)) is not None:
        return None
    kept_pages.hits += 1
    response = kept.answer(web.csrf)
    sessions.save(request, response, web)
    return response


def plain(web: Page, event: Event) -> bool:
    """Whether the page about to be rendered for ``web`` is the one every plain visitor
    sees (call before rendering: the render takes the flash message)."""
    request = web.request
    return (
        store(request.app).enabled
        and web.user is None
        and _plain_session(web.web)
        and web.web.get(cart_key(event.id)) is None
        and _plain_query(request.scope["query_string"])
    )


def forget(web: Page) -> None:
    """Drops the kept page of the request's path (its event is gone or offline)."""
    store(web.request.app).drop(_key(web.request, web.web))


def keep(web: Page, event: Event, response: Response, started: float) -> None:
    """Keeps the page rendered for a plain visitor from what was read after ``started``
    (:func:`clock` before the page's first statement): a 200; anything else drops
    the kept page of its path (e.g. the event went offline)."""
    kept_pages = store(web.request.app)
    key = _key(web.request, web.web)
    body = getattr(response, "body", None)
    if response.status_code != 200 or not isinstance(body, bytes):
        kept_pages.drop(key)
        return
    token = web.web.get("csrf")
    if not isinstance(token, str) or not token:
        return
    headers = [(k, v) for k, v in response.raw_headers if k.lower() not in _DROPPED_HEADERS]
    kept_pages.put(key, Kept(body.split(token.encode()), headers, event.id, started))


async def lane(request: LaneRequest) -> ASGIApp | None:
    """The fast lane's handler (PostgreSQL): a kept page, or the application's way."""
    return answer(Request(request.scope))
