"""A budget per client address for the public shop (pages and headless API), whatever the
general rate limit says: these routes take no credential, so the address is all there is to
count. Same counters and sliding window as ``kit/http/ratelimit.py`` (Redis when configured,
shared by every process; in the process otherwise)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from admit.devices.access import NoCredentials
from admit.kit.http.context import Session
from admit.kit.http.errors import APIError
from admit.kit.http.headers import client_address
from admit.kit.http.ratelimit import Budget, counter_store


def _limiter(request: Request) -> tuple[Any, Budget] | None:
    state = request.app.state
    found = getattr(state, "shop_limiter", False)
    if found is not False:
        return found
    settings = state.settings
    spec = settings.shop_rate_limit
    limiter = None
    if spec:
        budget = Budget.parse(spec, "ADMIT_SHOP_RATE_LIMIT")
        limiter = (counter_store(settings, "shop:"), budget)
    state.shop_limiter = limiter
    return limiter


COUNTED = "admit.shop_address_counted"


class PublicAccess(NoCredentials):
    """The access check of every public shop route: no credentials (the generated access
    tests know the kind), a budget per client address (429 with ``Retry-After`` past it)."""

    scope = "public"

    async def __call__(self, request: Request, session: Session) -> AsyncSession:  # type: ignore[override]
        await per_address(request)
        return session


async def per_address(request: Request) -> None:
    """Counts the request against its address's budget; 429 past it. Once per request: a
    fast-lane handler counts it first and may then leave it to the route (``COUNTED``)."""
    limiter = _limiter(request)
    if limiter is None or request.scope.get(COUNTED):
        return
    request.scope[COUNTED] = True
    store, budget = limiter
    verdict = await store.hit(
        "shop:" + client_address(request.scope, request.app.state.settings), budget
    )
    if verdict is not None and not verdict.allowed:
        raise APIError(
            429,
            f"Too many requests from your address. Please wait {verdict.retry_after} seconds.",
            headers={"Retry-After": str(verdict.retry_after)},
        )
