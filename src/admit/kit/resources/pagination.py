"""The list envelope ``{count, next, previous, results}``: 50 a page, ``page_size`` only smaller.

Beyond the reference, a kind of caller a domain registers (:func:`allow_page_size`) may ask
for larger pages: scanners that still download every ticket of a list (the reference's
"full" sync) fetch 100,000 tickets in 100 requests instead of 2,000. The caller's kind is the
authenticated principal's (``request.state.principal``, set by the route's access check
before any page is read); a request without one gets the reference's 50.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.context import public_base_url
from admit.kit.http.errors import APIError

PAGE_SIZE = 50


@dataclass(frozen=True)
class LargerPages:
    """The most a page may hold for one kind of caller, and how the API docs name it."""

    limit: int
    who: str


# By ``Principal.kind``; filled by the domains that make such principals (devices).
_LARGER: dict[str, LargerPages] = {}


def allow_page_size(kind: str, limit: int, who: str) -> None:
    """Callers of ``kind`` may ask for pages of up to ``limit`` rows (``who``: their name in
    the API docs, e.g. "a device token")."""
    _LARGER[kind] = LargerPages(limit, who)


def larger_pages() -> dict[str, LargerPages]:
    """What :func:`allow_page_size` registered, for the API docs."""
    return dict(_LARGER)


def max_page_size(request: Request) -> int:
    """The largest page the request's caller may ask for."""
    principal = getattr(request.state, "principal", None)
    larger = _LARGER.get(getattr(principal, "kind", ""))
    return larger.limit if larger is not None else PAGE_SIZE


def page_params(request: Request) -> tuple[int, int]:
    raw_page = request.query_params.get("page", "1")
    try:
        page = int(raw_page)
    except ValueError:
        raise APIError(404, "Invalid page.") from None
    if page < 1:
        raise APIError(404, "Invalid page.")
    size = PAGE_SIZE
    raw_size = request.query_params.get("page_size")
    if raw_size is not None:
        try:
            wanted = int(raw_size)
        except ValueError:
            wanted = 0
        # Zero, negative or junk: the default, as if none was asked for; more than the
        # caller may have: as many as it may.
        size = min(max_page_size(request), wanted) if wanted >= 1 else PAGE_SIZE
    return page, size


def _page_url(request: Request, page: int) -> str:
    origin = public_base_url(request)
    params = [(k, v) for k, v in request.query_params.multi_items() if k != "page"]
    if page > 1:
        params.append(("page", str(page)))
    query = urlencode(params)
    return f"{origin}{request.url.path}" + (f"?{query}" if query else "")


def envelope(request: Request, count: int, page: int, size: int, results: list[Any]) -> dict:
    last = max(1, -(-count // size))
    return {
        "count": count,
        "next": _page_url(request, page + 1) if page < last else None,
        "previous": _page_url(request, page - 1) if page > 1 else None,
        "results": results,
    }


async def paginate(
    request: Request,
    session: AsyncSession,
    query: Select[Any],
    serialize: Callable[[Sequence[Any]], list[Any]],
    *,
    options: Sequence[Any] = (),
) -> dict:
    """Count, fetch one page, serialise. A page past the end is 404 like the reference."""
    page, size = page_params(request)
    count = await session.scalar(select(func.count()).select_from(query.order_by(None).subquery()))
    count = int(count or 0)
    if page > 1 and (page - 1) * size >= count:
        raise APIError(404, "Invalid page.")
    paged = query.options(*options).limit(size).offset((page - 1) * size)
    rows = (await session.execute(paged)).scalars().unique().all()
    return envelope(request, count, page, size, serialize(rows))


def paginate_list(request: Request, items: Sequence[Any]) -> dict:
    """The same envelope over an in-memory sequence (small, computed lists)."""
    page, size = page_params(request)
    if page > 1 and (page - 1) * size >= len(items):
        raise APIError(404, "Invalid page.")
    chunk = list(items[(page - 1) * size : page * size])
    return envelope(request, len(items), page, size, chunk)
