"""Rendered list pages kept by a worker and answered again while nothing they show changed.

Integrations poll the same pages all day (the first page of the orders, the products, a
check-in list), and most polls find nothing new: rendering a page of 50 orders with their
positions and answers again costs ~10 ms of CPU for bytes equal to the last ones. So a
worker keeps the bytes of the list pages it answered, each with a *validator*: what the
database said, before the page was read, about everything the page shows. The next request
for the same page by the same credential reads the validator again in one small statement;
when it still holds, the kept bytes are the answer, which is exactly what rendering again
would give. Nothing is ever dropped on a guess or a timer: a page is valid by proof or not
answered from here.

A validator (:class:`Validator`, declared by each cached list) has two parts:

- **stamps**: values that every write of what the page shows changes, read by one statement
  (the event's catalog stamp, the events' deletion counter, a check-in list's own row). The
  kept page holds while they are equal.
- **changed since**: for tables with a row stamp per row (an order's ``last_modified``,
  moved by triggers for every change to the order and what belongs to it), a probe whether
  a row was stamped at or after the page's *bound*: the start of the oldest transaction
  still running when the page was read (``kit/stamps/page.py``). A transaction the page
  could not see started at or after the bound, and its rows are stamped no earlier than its
  start: any change the page missed makes the probe true. The probe reads the newest stamp
  of the event from an index on (event, stamp) (``changestamp.event_pages``).

The cost of a proof is one indexed statement; of a miss, that statement, the bound (reused
within 0.1 s) and the page as ever. Pages are kept per credential (a team token and a device
see through their own permissions), per host and scheme (the ``next`` links), per path and
query string; only 200 answers of requests without conditional headers, and only query
strings made of the parameters a list declares safe (time-dependent filters such as "future
dates" would make equal bytes wrong). Each worker keeps at most ``ADMIT_PAGE_CACHE_MB``
(least recently used pages go first; 0 turns the cache off). PostgreSQL only, as is the
fast lane that serves these lists.
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.types import ASGIApp, Receive, Scope, Send

from admit.kit.http.captured import Captured
from admit.kit.http.context import lane_context
from admit.kit.lanes.fastlane import Handler, LaneRequest
from admit.kit.stamps.page import page_generated

# Requests with these go the framework's way (their answers depend on more than the rows).
CONDITIONAL = (b"if-modified-since", b"if-none-match")
# What every list's pages may carry in the query string.
PAGING = frozenset({"page", "page_size", "ordering"})
# Answer headers kept with the body; the edge layers add theirs to every answer anew.
_KEPT_HEADERS = frozenset({b"content-type", b"last-modified", b"x-page-generated"})


@dataclass(frozen=True)
class Validator:
    """What a cached list's pages depend on: ``stamps``, a statement of one row (parameters:
    the list's own and ``bound``) compared for equality; with ``probes``, its last column
    says instead whether anything was stamped at or after ``bound`` (the kept page's). A
    module-level constant: the fast reader caches its SQL by identity."""

    stamps: Select[Any]
    probes: bool = False


@dataclass(frozen=True)
class Kept:
    """A kept answer: the validator's stamps and the bound (None without probes) read
    before the page was, and what the page's answer sent."""

    stamps: tuple[Any, ...]
    bound: dt.datetime | None
    status_code: int
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [*self.headers, (b"content-length", str(len(self.body)).encode())]
        await send({"type": "http.response.start", "status": self.status_code, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


class PageCache:
    """The kept pages of one worker, least recently used first, at most ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.hits = 0  # answers given from kept pages
        self.pages: OrderedDict[tuple[Any, ...], Kept] = OrderedDict()

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    def get(self, key: tuple[Any, ...]) -> Kept | None:
        kept = self.pages.get(key)
        if kept is not None:
            self.pages.move_to_end(key)
        return kept

    def put(self, key: tuple[Any, ...], kept: Kept) -> None:
        self.drop(key)
        if len(kept.body) > self.limit // 4:
            return  # a page this large would push out most others
        self.pages[key] = kept
        self.size += len(kept.body)
        while self.size > self.limit:
            _key, old = self.pages.popitem(last=False)
            self.size -= len(old.body)

    def drop(self, key: tuple[Any, ...]) -> None:
        old = self.pages.pop(key, None)
        if old is not None:
            self.size -= len(old.body)

    def clear(self) -> None:
        self.pages.clear()
        self.size = 0


def query_names(raw: bytes) -> set[str] | None:
    """The parameter names of a raw query string (None: it does not parse)."""
    if not raw:
        return set()
    try:
        return {name for name, _ in parse_qsl(raw.decode("latin-1"), keep_blank_values=True)}
    except ValueError:
        return None


def cacheable(request: LaneRequest, allowed: Collection[str]) -> bool:
    """Whether the request may be answered from kept pages: no conditional header, and a
    query string of nothing but ``allowed`` parameters (and paging)."""
    if any(request.header(name) is not None for name in CONDITIONAL):
        return False
    names = query_names(request.scope["query_string"])
    return names is not None and names <= PAGING.union(allowed)


def page_key(request: LaneRequest, principal: Any) -> tuple[Any, ...]:
    scope = request.scope
    return (
        principal.kind,
        principal.id,
        scope.get("scheme"),
        request.header(b"host"),
        scope.get("root_path", ""),
        scope["path"],
        scope["query_string"],
    )


@dataclass
class Lookup:
    """One request's look at the cache: ``answer`` when a kept page holds, else what the
    page about to be read is to be kept with."""

    key: tuple[Any, ...]
    answer: Kept | None = None
    stamps: tuple[Any, ...] = ()
    bound: dt.datetime | None = None

    def keep(self, cache: PageCache, status: int, headers: Sequence[tuple[bytes, bytes]],
             body: bytes) -> None:  # fmt: skip
        """Keeps the answer the page gave (a 200 only)."""
        if status != 200:
            cache.drop(self.key)
            return
        kept_headers = tuple((k, v) for k, v in headers if k.lower() in _KEPT_HEADERS)
        cache.put(self.key, Kept(self.stamps, self.bound, status, kept_headers, body))


async def look(
    cache: PageCache,
    session: AsyncSession,
    key: tuple[Any, ...],
    validator: Validator,
    params: Mapping[str, Any],
) -> Lookup:
    """The kept page for ``key`` when its validator still holds; otherwise what to keep the
    page with (call before the page is read)."""
    fast = session.info["fast"]
    key = (*key, *sorted(params.items()))  # the event's id too: a slug can change hands
    kept = cache.get(key)
    bound = kept.bound if kept is not None else None
    row = await fast.one(session, validator.stamps, {**params, "bound": bound})
    stamps, changed = _split(validator, row) if row is not None else ((), True)
    if kept is not None and stamps == kept.stamps and not changed:
        cache.hits += 1
        return Lookup(key, answer=kept)
    # Read before the page, the stamps hold for it; the probes need a bound of its own.
    bound = await page_generated(session) if validator.probes else None
    return Lookup(key, stamps=stamps, bound=bound)


def _split(validator: Validator, row: Sequence[Any]) -> tuple[tuple[Any, ...], bool]:
    if validator.probes:
        return tuple(row[:-1]), bool(row[-1])
    return tuple(row), False


class Filling:
    """An ASGI app that runs the application for a request whose page is not kept, and
    keeps its answer (see ``kit/lanes/fastlane.py``: a lane handler may answer with any ASGI
    app)."""

    def __init__(self, cache: PageCache, lookup: Lookup, app: ASGIApp) -> None:
        self.cache = cache
        self.lookup = lookup
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        captured = Captured()
        await self.app(scope, receive, captured.passing_to(send))
        if captured.status is not None and captured.complete:
            self.lookup.keep(self.cache, captured.status, captured.headers, captured.body)


def kept_route(access: Any, validator: Validator, allowed: Collection[str] = ()) -> Handler:
    """A lane handler for an event's list route whose caller check is ``access`` (the
    route's own) and whose pages ``validator`` proves: a kept page when it holds, else the
    route's answer, kept. Query parameters other than paging and ``allowed``, conditional
    headers and callers the check refuses go the route's way, unkept."""

    async def handler(request: LaneRequest) -> ASGIApp | None:
        cache: PageCache = request.scope["app"].state.page_cache
        if not cache.enabled or not cacheable(request, allowed):
            return None
        async with lane_context(request.scope, access, request.params) as ctx:
            if ctx is None:
                return None  # the route gives the 401/403
            key = page_key(request, ctx.principal)
            params = {"event_id": ctx.event.id}  # type: ignore[attr-defined]
            lookup = await look(cache, ctx.session, key, validator, params)
        if lookup.answer is not None:
            return lookup.answer
        return Filling(cache, lookup, request.scope["app"].framework)

    return handler
