"""What every page handler starts from: the web session, the logged-in user, form reading
with the CSRF check, rendering and redirects that carry the session cookie."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from fastapi import Request
from jinja2 import Environment
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import RedirectResponse, Response

from admit.db import utcnow, write_intent
from admit.kit.http.context import Session, public_base_url
from admit.kit.http.errors import FieldErrors
from admit.kit.http.headers import client_address
from admit.kit.http.transaction import SAFE_METHODS
from admit.models import LoginSession, User
from admit.users import logins
from admit.users.accounts import password_fingerprint
from admit.web import sessions
from admit.web.forms import FormError, first, read_form
from admit.web.render import SECURITY_HEADERS, render

TWO_FACTOR_SETUP = "/settings/2fa/"
HOME = "/settings/"


class HostRefused(Exception):
    """A page request whose ``Host`` may not build links: answered with an HTML page (400),
    as a person reads it, where the API answers the same refusal as JSON."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(errors)
        self.reason = next(iter(errors.values()))[0]


async def host_refused_page(_request: Request, exc: Exception) -> Response:
    reason = exc.reason if isinstance(exc, HostRefused) else str(exc)
    # No session is read or written for a refused host: the page shows nobody's state.
    anonymous = {"csrf_token": "", "user": None, "setup_pending": False, "flash": None}
    return render(
        "message.html", 400, title="This address is not served here", text=reason, **anonymous
    )


def safe_next(url: str | None, default: str = HOME) -> str:
    """Only paths on this site (no ``//host`` or ``\\host`` tricks): no open redirect."""
    if (
        not url
        or not url.startswith("/")
        or url.startswith(("//", "/\\"))
        or any(c in url for c in "\r\n\t\\")
        or len(url) > 4000
    ):
        return default
    return url


@dataclass
class Page:
    request: Request
    session: AsyncSession
    web: sessions.WebSession
    user: User | None
    login: LoginSession | None = None

    @classmethod
    async def load(cls, request: Request, session: AsyncSession) -> Page:
        # Pages build links (reset and invitation mails, the cookie's Secure flag): a request
        # with a Host that is not allowed is refused (400) before anything happens.
        try:
            public_base_url(request)
        except FieldErrors as exc:
            raise HostRefused(exc.errors) from None
        web = sessions.load(request)
        page = cls(request, session, web, None)
        user_id = web.get("u")
        if isinstance(user_id, int):
            user = await session.get(User, user_id)
            row = await logins.find(session, user_id, web.get("sid")) if user else None
            if (
                user is None
                or row is None
                or not user.is_active
                or web.get("pw") != password_fingerprint(user)
            ):
                web.log_out()  # logged out elsewhere, or the password changed
            else:
                page.user, page.login = user, row
                await page._touch(row)
        return page

    async def _touch(self, row: LoginSession) -> None:
        """Notes when (and from where) the session was last seen, at most once a minute; a
        safe request's session is read-only, so that write takes a short one of its own."""
        now = utcnow()
        if not logins.due_for_touch(row, now):
            return
        if self.request.method not in SAFE_METHODS:
            await logins.touch(self.session, row.id, ip=self.ip, now=now)
            return
        intent = write_intent.set(True)
        try:
            async with self.request.app.state.db.sessionmaker() as writer:
                await logins.touch(writer, row.id, ip=self.ip, now=now)
                await writer.commit()
        finally:
            write_intent.reset(intent)

    async def log_in(self, user: User, *, needs_2fa_setup: bool = False) -> None:
        """Starts a login session (ending the one this browser had: no fixation)."""
        await logins.end(self.session, self.web.get("sid"))
        row, key = await logins.start(
            self.session,
            user.id,
            user_agent=self.request.headers.get("user-agent", ""),
            ip=self.ip,
            hours=self.settings.session_hours,
        )
        self.web.log_in(user, key, needs_2fa_setup=needs_2fa_setup)
        self.user, self.login = user, row

    async def log_out(self) -> None:
        """Ends this browser's login session, on every server process."""
        await logins.end(self.session, self.web.get("sid"))
        self.web.log_out()
        self.user = self.login = None

    @property
    def settings(self) -> Any:
        return self.request.app.state.settings

    @property
    def ip(self) -> str:
        """The client's address as the rate limits see it (behind a trusted proxy the
        forwarded one): the login throttle counts per client, not per proxy."""
        return client_address(self.request.scope, self.settings)

    def here(self) -> str:
        url = self.request.url.path
        return f"{url}?{self.request.url.query}" if self.request.url.query else url

    def render(
        self,
        template: str,
        status: int = 200,
        *,
        env: Environment | None = None,
        headers: dict[str, str] = SECURITY_HEADERS,
        **context: Any,
    ) -> Response:
        """The page with the session's CSRF token, user and flash message, the session saved;
        ``env`` and ``headers`` as :func:`admit.web.render.render` takes them."""
        response = render(
            template,
            status,
            env=env,
            headers=headers,
            csrf_token=self.web.csrf,
            user=self.user,
            setup_pending=bool(self.web.get("setup2fa")),
            flash=self.web.pop_flash(),
            **context,
        )
        sessions.save(self.request, response, self.web)
        return response

    def redirect(self, url: str, status: int = 303) -> Response:
        response = RedirectResponse(url, status_code=status, headers=SECURITY_HEADERS)
        sessions.save(self.request, response, self.web)
        return response

    def message(self, title: str, text: str, status: int) -> Response:
        return self.render("message.html", status, title=title, text=text)

    def not_found(self) -> Response:
        return self.message("Not found", "There is nothing here (any more).", 404)

    def gate(self) -> Response | None:
        """A redirect when the page needs a full login (or the second-factor setup a team
        requires comes first); None when the user may see it."""
        if self.user is None:
            return self.redirect(f"/login?next={quote(self.here(), safe='')}")
        if self.web.get("setup2fa") and self.request.url.path != TWO_FACTOR_SETUP:
            return self.redirect(f"{TWO_FACTOR_SETUP}?next={quote(self.here(), safe='')}")
        return None

    async def post(self) -> tuple[list[tuple[str, str]], Response | None]:
        """The form's fields, or the response refusing it: 403 without the session's CSRF
        token, 4xx for a body that is no form."""
        try:
            pairs = await read_form(self.request)
        except FormError as exc:
            return [], self.message("Bad request", exc.message, exc.status)
        return pairs, self.refuse_csrf(pairs)

    def refuse_csrf(self, pairs: list[tuple[str, str]]) -> Response | None:
        """The 403 page when the form lacks the session's CSRF token, else None."""
        if self.web.csrf_ok(first(pairs, "csrf_token")):
            return None
        return self.message(
            "Forbidden",
            "The form could not be verified (CSRF token missing or wrong). Go back, reload "
            "the page and try again.",
            403,
        )


Handler = Callable[..., Awaitable[Response]]
_PAGE_ARGS = ("page", "pairs")


def signed_in(*, form: bool = False) -> Callable[[Handler], Handler]:
    """Makes ``handler`` a page of a signed-in user: the route loads the page, sends anyone
    else to the login (or to the second-factor setup a team requires first) and, with
    ``form``, answers a body that is no form or lacks the session's CSRF token before the
    handler runs. The handler takes ``page`` (and, with ``form``, the form's ``pairs`` if it
    names them) besides its own path parameters, and only runs for a user who may see it."""

    def wrap(handler: Handler) -> Handler:
        hints = typing.get_type_hints(handler)
        takes_pairs = "pairs" in inspect.signature(handler).parameters
        own = [
            param.replace(annotation=hints.get(name, param.annotation))
            for name, param in inspect.signature(handler).parameters.items()
            if name not in _PAGE_ARGS
        ]

        async def route(request: Request, session: Session, **params: Any) -> Response:
            page = await Page.load(request, session)
            if gate := page.gate():
                return gate
            if form:
                pairs, refused = await page.post()
                if refused:
                    return refused
                if takes_pairs:
                    params["pairs"] = pairs
            return await handler(page, **params)

        keyword = inspect.Parameter.KEYWORD_ONLY
        route.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [
                inspect.Parameter("request", keyword, annotation=Request),
                inspect.Parameter("session", keyword, annotation=Session),
                *(param.replace(kind=keyword) for param in own),
            ],
            return_annotation=Response,
        )
        route.__name__ = handler.__name__
        route.__qualname__ = handler.__qualname__
        route.__doc__ = handler.__doc__
        route.signed_in = True  # type: ignore[attr-defined]
        return route

    return wrap
