"""The GET side of a declared resource (``kit/resources/crud.py``) that has a renderer.

List and detail GETs are answered from the resource's ``renderer`` (``kit/resources/render.py``)
with
the statements of ``kit/resources/listing.py``: the same access check, tenant, filters, ordering,
pagination and 404s as the read schema path, which stays for writes and for what a resource
does not render (``renders``). A list is also served in the fast lane (``list_lane``, on
PostgreSQL), past the framework's routing and dependency solving.

A resource that also declares ``json_shape`` (its renderer with the SQL of what ``finish``
computes, ``kit/resources/sql_json.py``) has its list pages written as JSON by PostgreSQL:
the same statements, filters and pages, one text per row, no Python object per row. Its
``json_params`` are the request's values the shape's expressions bind. Details and SQLite
keep the Python rendering; both give the same bytes (the domains' ``test_sql_json`` tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from starlette.responses import Response

from admit.kit.http.context import OrgContext, lane_context
from admit.kit.http.errors import not_found
from admit.kit.lanes.fastlane import Handler, LaneRequest
from admit.kit.resources.listing import Listing, detail_body
from admit.kit.resources.render import Rows
from admit.kit.resources.sql_json import JsonShape, respond_json
from admit.kit.stamps.pagecache import (
    CONDITIONAL,
    Lookup,
    PageCache,
    Validator,
    cacheable,
    look,
    page_key,
)

if TYPE_CHECKING:
    from admit.kit.resources.crud import Resource


class RenderedReads:
    """Mixed into ``Resource``: ``renderer`` None keeps every GET on the read schema."""

    # How list and detail GETs render without ORM objects (None: through ``read_schema``).
    renderer: ClassVar[Rows | None] = None
    _listing: Listing | None = None
    # The renderer's rows as JSON written by PostgreSQL (None: lists render in Python).
    json_shape: ClassVar[JsonShape | None] = None
    _json_listing: Listing | None = None

    def json_params(self, ctx: OrgContext) -> Mapping[str, Any]:
        """The request's values ``json_shape`` binds (e.g. the public base URL)."""
        return {}

    def renders(self, ctx: OrgContext) -> bool:
        """Whether this request is answered by ``renderer`` (else by the read schema)."""
        return self.renderer is not None

    async def prepare_read(self, ctx: OrgContext, params: dict[str, str]) -> None:
        """``prepare`` for a list or detail GET; a resource whose ``prepare`` loads what
        only the read schema path needs skips it when ``renders``."""
        await self.prepare(ctx, params)  # type: ignore[attr-defined]

    # Resources of an event whose list pages are kept (``kit/stamps/pagecache.py``) under this
    # validator of the event id; their rows render nothing of the event row itself.
    kept_by: ClassVar[Validator | None] = None

    def page_validator(self, ctx: OrgContext) -> tuple[Validator, dict[str, Any]] | None:
        """What this list page's kept copy depends on, with the statement's parameters
        (``kit/stamps/pagecache.py``); None: never kept."""
        if self.kept_by is None:
            return None
        return self.kept_by, {"event_id": ctx.event.id}  # type: ignore[attr-defined]

    def snapshot_current(self, ctx: OrgContext, stamps: tuple[Any, ...]) -> bool:
        """Whether what the request rendered from (the event may be the lane's cached
        snapshot) is as new as ``stamps``: only then is the page kept."""
        return self.kept_by is not None

    def render_extra(self, ctx: OrgContext) -> Mapping[str, Any]:
        """What the renderer's ``finish`` functions need from the request."""
        return {}

    def static_list(self, ctx: OrgContext) -> bool:
        """Whether this list request is narrowed by nothing but the tenant."""
        if not self.plain_base():  # type: ignore[attr-defined]
            return False
        params = ctx.request.query_params
        return not any(name in params for name in self.filters.names)  # type: ignore[attr-defined]

    def tenant_id(self, ctx: OrgContext) -> int:
        if self.scope == "event":  # type: ignore[attr-defined]
            return ctx.event.id  # type: ignore[attr-defined,no-any-return]
        return ctx.organizer_id

    def _make_listing(self, rows: Any) -> Listing:
        model = self.model  # type: ignore[attr-defined]
        # Only the statements built once use it (``plain_base``); others start from
        # ``base_query``.
        column = "event_id" if self.scope == "event" else "organizer_id"  # type: ignore[attr-defined]
        tenant = getattr(model, column, None)
        return Listing(rows, model.__table__, tenant, model.id, self.ordering)  # type: ignore[attr-defined]

    def listing(self) -> Listing:
        if self._listing is None:
            assert self.renderer is not None
            self._listing = self._make_listing(self.renderer)
        return self._listing

    def json_listing(self) -> Listing:
        """The listing whose rows are ``json_shape`` (one JSON text per row)."""
        if self._json_listing is None:
            self._json_listing = self._make_listing(self.json_shape)
        return self._json_listing

    async def render_list(self, ctx: OrgContext) -> Response:
        assert self.renderer is not None
        resource: Resource[Any] = self  # type: ignore[assignment]
        static = self.static_list(ctx)
        query = None if static else resource.list_query(ctx)
        raw = None
        if static and self.ordering is not None:  # type: ignore[attr-defined]
            raw = ctx.request.query_params.get("ordering")
        tenant = self.tenant_id(ctx) if static else None
        if _in_sql(self, ctx):
            values = self.json_params(ctx)
            return await respond_json(
                self.json_listing(),
                ctx.request,
                ctx.session,
                query,
                values,
                tenant=tenant,
                ordering=raw,
            )
        return await self.listing().respond(
            ctx.request,
            ctx.session,
            query=query,
            tenant=tenant,
            ordering=raw,
            extra=self.render_extra(ctx),
        )

    async def render_detail(self, ctx: OrgContext, raw_pk: str) -> Response:
        from admit.kit.resources.filtering import parse_pk

        assert self.renderer is not None
        resource: Resource[Any] = self  # type: ignore[assignment]
        pk = parse_pk(raw_pk)
        listing = self.listing()
        reader = ctx.session.info["fast"]
        if resource.static_detail(ctx):
            stmt, static = listing.static_detail(reader.native), True
            params = {"tenant": self.tenant_id(ctx), "pk": pk}
        else:
            query = resource.base_query(ctx)
            stmt, static, params = listing.detail_of(query, pk, reader.native), False, {}
        body = await detail_body(
            reader,
            ctx.session,
            self.renderer,
            stmt,
            params,
            static=static,
            extra=self.render_extra(ctx),
        )
        if body is None:
            raise not_found()
        return Response(body, media_type="application/json")


def _in_sql(resource: RenderedReads, ctx: OrgContext) -> bool:
    """Whether PostgreSQL writes this list page's JSON: a resource with a ``json_shape``
    (and its renderer: tests turn that off to compare with the read schema), on the native
    pool."""
    return (
        resource.json_shape is not None
        and resource.renderer is not None
        and bool(ctx.session.info["fast"].native)
    )


# A resource that overrides one of these renders its own way: nothing is derived for it.
_OWN_RENDERING = (
    "to_read",
    "serialize",
    "serialize_many",
    "handle_list",
    "handle_retrieve",
    "get_object",
)


def derive_renderer(resource: Resource[Any], base: type[Resource[Any]]) -> Rows | None:
    """For a resource that declares no ``renderer`` (not even None) and renders its read
    schema straight from its model's columns: the renderer derived from the two. ``base`` is
    ``Resource`` itself, handed in by ``crud.py`` (this module is imported by it)."""
    cls = type(resource)
    if any("renderer" in klass.__dict__ for klass in cls.__mro__ if klass is not RenderedReads):
        return None
    if any(getattr(cls, name) is not getattr(base, name) for name in _OWN_RENDERING):
        return None
    try:
        return Rows(resource.read_schema, resource.model)
    except ValueError:
        return None  # a field that is not a column: the read schema path renders it


def list_lane(resource: Resource[Any]) -> Handler:
    """The resource's list GET in the fast lane (``kit/lanes/fastlane.py``): the same access check
    (the credential may come from the worker's short cache, as on every lane), the same
    handler; declined (to the framework) with conditional headers or when the renderer does
    not answer the request. Pages of resources with a ``page_validator`` are kept and
    answered again while it holds (``kit/stamps/pagecache.py``)."""
    access = resource.access(resource.read_permission)

    async def handler(request: LaneRequest) -> Any:
        if any(request.header(name) is not None for name in CONDITIONAL):
            return None
        cache: PageCache = request.scope["app"].state.page_cache
        async with lane_context(request.scope, access, request.params) as ctx:
            if ctx is None or not resource.renders(ctx):
                return None
            lookup: Lookup | None = None
            validator = resource.page_validator(ctx) if cache.enabled else None
            if validator is not None and cacheable(request, ()):
                key = page_key(request, ctx.principal)
                lookup = await look(cache, ctx.session, key, *validator)
                if lookup.answer is not None:
                    return lookup.answer
            await resource.prepare_read(ctx, request.params)
            response = await resource.handle_list(ctx)
            if lookup is not None and resource.snapshot_current(ctx, lookup.stamps):
                lookup.keep(cache, response.status_code, response.raw_headers, response.body)
            return response

    return handler
