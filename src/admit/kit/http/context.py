"""Who is calling, and which organizer / event the URL names: the one permission check.

Every API route depends on :class:`OrganizerAccess` or :class:`EventAccess` (or
:class:`Authenticated` for routes outside an organizer). They answer 401 for missing or bad
credentials, 403 for an organizer or event that does not exist or lies outside the caller's
teams, and 403 when the caller lacks the route's permission. An OAuth token additionally needs
the ``write`` scope for unsafe methods. Another tenant's object is indistinguishable from a
missing one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Path, Request
from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.types import Scope

from admit.kit.http.errors import APIError, forbidden
from admit.kit.http.hosts import request_origin
from admit.kit.http.transaction import SAFE_METHODS, db_session
from admit.models import Event, Organizer

Session = Annotated[AsyncSession, Depends(db_session, scope="function")]


def implied(permissions: frozenset[str], wanted: str) -> bool:
    """A ``:write`` permission implies the matching ``:read``."""
    if wanted in permissions:
        return True
    return wanted.endswith(":read") and f"{wanted[:-5]}:write" in permissions


@dataclass(frozen=True)
class Grant:
    """What one team (or device) grants within one organizer."""

    organizer_id: int
    organizer_slug: str
    all_events: bool
    event_ids: frozenset[int]
    all_event_permissions: bool
    event_permissions: frozenset[str]
    all_organizer_permissions: bool
    organizer_permissions: frozenset[str]

    def has_organizer_permission(self, permission: str) -> bool:
        return self.all_organizer_permissions or implied(self.organizer_permissions, permission)

    def covers_event(self, event_id: int) -> bool:
        return self.all_events or event_id in self.event_ids

    def has_event_permission(self, permission: str) -> bool:
        return self.all_event_permissions or implied(self.event_permissions, permission)


@dataclass(frozen=True)
class Principal:
    """The authenticated caller: a team API token, a user (OAuth) or a device."""

    kind: str
    id: int
    grants: tuple[Grant, ...]
    scopes: frozenset[str] | None = None
    user_id: int | None = None
    device_id: int | None = None
    team_id: int | None = None

    def grants_for(self, organizer_slug: str) -> tuple[Grant, ...]:
        return tuple(g for g in self.grants if g.organizer_slug == organizer_slug)

    @property
    def organizer_ids(self) -> frozenset[int]:
        return frozenset(g.organizer_id for g in self.grants)

    def may_write(self) -> bool:
        return self.scopes is None or "write" in self.scopes


Authenticator = Callable[[Request, AsyncSession], Awaitable[Principal]]


async def authenticate(request: Request, session: AsyncSession) -> Principal:
    cached = getattr(request.state, "principal", None)
    if cached is None:
        authenticator: Authenticator = request.app.state.authenticator
        cached = await authenticator(request, session)
        request.state.principal = cached
    # Who acts in this transaction: what it records (``notifications``) names them.
    session.info[ACTOR] = (cached.kind, cached.id)
    return cached


ACTOR = "actor"  # session.info key: (principal kind, id) of whoever the request acts for


def _check_scope(request: Request, principal: Principal) -> None:
    if request.method not in SAFE_METHODS and not principal.may_write():
        raise forbidden("The OAuth token lacks the write scope required for this action.")


@dataclass
class OrgContext:
    request: Request
    session: AsyncSession
    principal: Principal
    organizer_id: int
    organizer_slug: str
    grants: tuple[Grant, ...]
    extra: dict[str, Any] = field(default_factory=dict)

    async def organizer(self) -> Organizer:
        org = self.extra.get("organizer")
        if org is None:
            org = await self.session.get(Organizer, self.organizer_id)
            self.extra["organizer"] = org
        return org

    def has_organizer_permission(self, permission: str) -> bool:
        return any(g.has_organizer_permission(permission) for g in self.grants)

    def can_access_event(self, event_id: int) -> bool:
        return any(g.covers_event(event_id) for g in self.grants)

    def has_event_permission(self, event_id: int, permission: str) -> bool:
        return any(
            g.covers_event(event_id) and g.has_event_permission(permission) for g in self.grants
        )

    def accessible_event_ids(self) -> frozenset[int] | None:
        """None when the caller sees every event of the organizer."""
        if any(g.all_events for g in self.grants):
            return None
        return frozenset().union(*(g.event_ids for g in self.grants))


@dataclass
class EventContext(OrgContext):
    event: Event = None  # type: ignore[assignment]


class Authenticated:
    """Any authenticated caller; for routes outside an organizer (e.g. the organizer list)."""

    permission: str | None = None
    scope = "global"

    async def __call__(self, request: Request, session: Session) -> Principal:
        principal = await authenticate(request, session)
        _check_scope(request, principal)
        return principal


async def _resolve_organizer(
    request: Request, session: AsyncSession, organizer: str
) -> tuple[Principal, tuple[Grant, ...]]:
    """The caller and its grants in ``organizer``; 403 when it has none there."""
    principal = await authenticate(request, session)
    grants = principal.grants_for(organizer)
    if not grants:
        raise forbidden()
    _check_scope(request, principal)
    return principal, grants


class OrganizerAccess:
    """Resolves ``{organizer}`` for the caller; optionally requires an organizer permission."""

    scope = "organizer"

    def __init__(self, permission: str | None = None) -> None:
        self.permission = permission

    async def __call__(
        self,
        request: Request,
        session: Session,
        organizer: Annotated[str, Path(description="The organizer's slug")],
    ) -> OrgContext:
        principal, grants = await _resolve_organizer(request, session, organizer)
        ctx = OrgContext(
            request=request,
            session=session,
            principal=principal,
            organizer_id=grants[0].organizer_id,
            organizer_slug=organizer,
            grants=grants,
        )
        if self.permission and not ctx.has_organizer_permission(self.permission):
            raise forbidden()
        return ctx


EVENT_ROW_COLUMNS = tuple(Event.__table__.columns)
_EVENT_COLUMNS = tuple(c.key for c in EVENT_ROW_COLUMNS)
_EVENT_ORM_QUERY = select(Event).where(
    Event.organizer_id == bindparam("organizer_id"), Event.slug == bindparam("slug")
)
_EVENT_ROW_QUERY = select(*EVENT_ROW_COLUMNS).where(
    Event.organizer_id == bindparam("organizer_id"), Event.slug == bindparam("slug")
)


_new_event = Event.__mapper__.class_manager.new_instance


# Set in the scope while a fast-lane handler resolves its caller (``lane_context``): the event
# comes as a snapshot prefetched with the credential, as for a GET (lane handlers write other
# rows only), and the credential may come from the worker's cache (``auth/credentials.py``).
LANE_REQUEST = "admit.lane"


def wants_event_snapshot(request: Request) -> bool:
    return request.method in SAFE_METHODS or LANE_REQUEST in request.scope


def prefetch_event(request: Request, organizer_id: int, slug: str, row: Any) -> None:
    """An authenticator that fetched the URL's event along with the credential hands it on."""
    request.state.event_row = (organizer_id, slug, tuple(row))


async def _load_event(
    request: Request, session: AsyncSession, organizer_id: int, slug: str
) -> Event | None:
    """Reads get a detached snapshot through the fast path; writes a row in the session."""
    params = {"organizer_id": organizer_id, "slug": slug}
    if wants_event_snapshot(request):
        prefetched = getattr(request.state, "event_row", None)
        if prefetched is not None and prefetched[:2] == (organizer_id, slug):
            row = prefetched[2]
        else:
            row = await session.info["fast"].one(session, _EVENT_ROW_QUERY, params)
        if not row or row[0] is None:
            return None
        # A read-only snapshot: filled straight into __dict__, skipping the per-attribute
        # instrumentation events of the constructor (nothing tracks changes to it).
        snapshot = _new_event()
        snapshot.__dict__.update(zip(_EVENT_COLUMNS, row, strict=True))
        return snapshot
    return (await session.execute(_EVENT_ORM_QUERY, params)).scalar_one_or_none()


class EventAccess:
    """Resolves ``{organizer}`` and ``{event}``; optionally requires an event permission
    and/or an organizer permission (e.g. cloning needs ``organizer.events:create``)."""

    scope = "event"

    def __init__(
        self, permission: str | None = None, *, organizer_permission: str | None = None
    ) -> None:
        self.event_permission = permission
        self.organizer_permission = organizer_permission
        self.permission = permission or organizer_permission

    async def __call__(
        self,
        request: Request,
        session: Session,
        organizer: Annotated[str, Path(description="The organizer's slug")],
        event: Annotated[str, Path(description="The event's slug")],
    ) -> EventContext:
        principal, grants = await _resolve_organizer(request, session, organizer)
        organizer_id = grants[0].organizer_id
        obj = await _load_event(request, session, organizer_id, event)
        if obj is None or not any(g.covers_event(obj.id) for g in grants):
            raise forbidden()
        ctx = EventContext(
            request=request,
            session=session,
            principal=principal,
            organizer_id=organizer_id,
            organizer_slug=organizer,
            grants=grants,
            event=obj,
        )
        if self.event_permission and not ctx.has_event_permission(obj.id, self.event_permission):
            raise forbidden()
        if self.organizer_permission and not ctx.has_organizer_permission(
            self.organizer_permission
        ):
            raise forbidden()
        return ctx


@asynccontextmanager
async def lane_context(
    scope: Scope, access: OrganizerAccess | EventAccess, params: dict[str, str]
) -> AsyncIterator[OrgContext | None]:
    """What ``access`` resolves for a fast-lane handler (see ``kit/lanes/fastlane.py``), with a
    read-only session and the event as a snapshot; None when the caller may not (the normal
    path then gives the 401/403)."""
    scope[LANE_REQUEST] = True
    scope["path_params"] = params
    request = Request(scope)
    db = request.app.state.db
    session: AsyncSession = db.read_sessionmaker()
    session.info["fast"] = db.fast
    try:
        try:
            names = ("organizer", "event") if isinstance(access, EventAccess) else ("organizer",)
            ctx = await access(request, session, **{n: params[n] for n in names})
        except APIError:
            ctx = None
        finally:
            del scope[LANE_REQUEST]  # a declined request goes the normal path entirely
        yield ctx
    finally:
        if session.in_transaction() or session.identity_map:
            await session.close()


def unauthenticated(detail: str = "Authentication credentials were not provided.") -> APIError:
    return APIError(401, detail, headers={"WWW-Authenticate": "Token"})


def public_base_url(request: Request) -> str:
    """The configured ``ADMIT_BASE_URL``, else the URL the request came in on when its host is
    allowed (``kit.http.hosts``: 400 otherwise, so no link is built from a forged ``Host``)."""
    return request_origin(request)


class AnyEventPermission(EventAccess):
    """Event access with any one of several permissions."""

    def __init__(self, *permissions: str) -> None:
        super().__init__(permissions[0])
        self.permissions = permissions
        self.event_permission = None  # checked below, any of them

    async def __call__(
        self,
        request: Request,
        session: Session,
        organizer: Annotated[str, Path(description="The organizer's slug")],
        event: Annotated[str, Path(description="The event's slug")],
    ) -> EventContext:
        ctx = await super().__call__(request, session, organizer, event)
        if not any(ctx.has_event_permission(ctx.event.id, p) for p in self.permissions):
            raise forbidden()
        return ctx
