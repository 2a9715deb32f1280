"""Who may see a back-office page: the signed-in user with the grants of their teams, checked
by the very access objects the API's routes use (``EventAccess``, ``OrganizerAccess``, …).

A page is declared with :func:`control_page` and the access object of the API route it
mirrors; the user's :class:`~admit.kit.http.context.Principal` is rebuilt from their teams on
every request (``auth.owners.current_principal``), so a permission taken away counts at once.
A refusal is the HTML page ``forbidden.html`` (403), never the API's JSON or a traceback.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.auth.owners import current_principal
from admit.control.render import render
from admit.kit.http.context import EventAccess, OrganizerAccess, OrgContext, Principal
from admit.kit.http.errors import APIError
from admit.kit.http.transaction import discard_before_commit
from admit.web.forms import Pairs
from admit.web.page import Page, signed_in

Access = EventAccess | OrganizerAccess
Handler = Callable[..., Awaitable[Response]]
_OWN_SKIPPED = ("page", "ctx", "pairs")


async def principal_of(page: Page) -> Principal:
    """The user as the API would see them with an access token of every team they are in."""
    cached = getattr(page.request.state, "principal", None)
    if cached is not None:
        return cached
    assert page.user is not None
    principal = await current_principal(page.session, "user", page.user.id)
    assert principal is not None  # the page loaded an active user
    page.request.state.principal = principal
    return principal


def forbidden(page: Page, detail: str = "") -> Response:
    """The 403 page: says what happened and where to go, never what exists."""
    return render(
        page,
        "forbidden.html",
        403,
        detail=detail or "You do not have permission to see this page or do this.",
        nav=None,
    )


async def discard(page: Page, ctx: OrgContext) -> None:
    """Undoes what a refused action changed (the request's transaction would commit it) and
    reads again the rows the page goes on showing (a rollback expires them)."""
    session: AsyncSession = page.session
    discard_before_commit(session)
    session.info.pop("after_commit", None)
    await session.rollback()
    for row in (page.user, getattr(ctx, "event", None)):
        if row is not None and row in session:
            await session.refresh(row)


def control_page(access: Access, *, form: bool = False) -> Callable[[Handler], Handler]:
    """Makes ``handler(page, ctx, [pairs], **own)`` a signed-in page under an organizer (and
    event) of the URL, answered only when ``access`` lets the user through: ``ctx`` is what
    the API route gets. The route keeps ``access`` as ``control_access`` so a test can visit
    every page as a user with and without its permission."""
    event_scoped = isinstance(access, EventAccess)

    def wrap(handler: Handler) -> Handler:
        hints = typing.get_type_hints(handler)
        params = inspect.signature(handler).parameters
        takes_pairs = "pairs" in params
        own = [
            p.replace(annotation=hints.get(n, p.annotation), kind=p.KEYWORD_ONLY)
            for n, p in params.items()
            if n not in _OWN_SKIPPED
        ]
        path = ["organizer", "event"] if event_scoped else ["organizer"]

        async def inner(page: Page, **kwargs: Any) -> Response:
            pairs = kwargs.pop("pairs", None)
            names = {name: kwargs.pop(name) for name in path}
            await principal_of(page)
            try:
                ctx: OrgContext = await access(page.request, page.session, **names)
            except APIError as exc:
                if exc.status == 403:
                    return forbidden(page)
                return render(page, "forbidden.html", exc.status, detail=exc.detail, nav=None)
            if takes_pairs:
                kwargs["pairs"] = pairs
            try:
                return await handler(page, ctx, **kwargs)
            except APIError as exc:  # a missing object: a page, not the API's JSON
                if exc.status == 403:
                    return forbidden(page)
                return render(page, "forbidden.html", exc.status, detail=exc.detail, nav=None)

        keyword = inspect.Parameter.KEYWORD_ONLY
        inner.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [
                inspect.Parameter("page", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Page),
                *([inspect.Parameter("pairs", keyword, annotation=Pairs)] if form else []),
                *(inspect.Parameter(n, keyword, annotation=str) for n in path),
                *own,
            ],
            return_annotation=Response,
        )
        inner.__annotations__ = {
            "page": Page,
            **({"pairs": Pairs} if form else {}),
            **dict.fromkeys(path, str),
            **{p.name: p.annotation for p in own},
            "return": Response,
        }
        inner.__name__ = handler.__name__
        inner.__qualname__ = handler.__qualname__
        inner.__doc__ = handler.__doc__
        route = signed_in(form=form)(inner)
        route.control_access = access  # type: ignore[attr-defined]
        return route

    return wrap
