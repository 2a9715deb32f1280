"""Declared CRUD resources: list / retrieve / create / PUT / PATCH / delete, written once.

A resource names its model, its read and write schemas, its scope (organizer or event), the
permissions for reading and writing, filters and ordering. ``mount_crud`` turns it into routes
that all go through the same access check, pagination, validation and error shapes. Resources
with real behaviour override the hooks (``validate``, ``apply``, ``perform_*``) or add routes.

PATCH and PUT both validate the merged state (current values overlaid with the supplied ones),
so rules spanning fields hold whichever of them a client sends. PUT differs only in that every
*required* field of the write schema must be in the body (400 naming each missing one); an
omitted optional field keeps its stored value, as the reference's PUT does. Resetting omitted
fields to defaults would silently destroy what a client never meant to touch (a category, a tax
rule) just because it sent the fields it knew. POST validates the body alone.

A resource that declares a ``renderer`` (``kit/resources/render.py``) answers its list and detail
GETs
from Core selects rendered straight to JSON (``kit/resources/listing.py``), with the same filters,
ordering, pagination and tenancy; writes answer through the read schema as before. Both
render the same JSON (``tests/kit/test_render_parity.py``).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, ClassVar, Generic, TypeVar

from fastapi import APIRouter, Depends, Path
from pydantic import BaseModel, ValidationError
from sqlalchemy import Select, select
from sqlalchemy.exc import IntegrityError
from starlette.responses import Response

from admit.kit.http.body import read_object
from admit.kit.http.context import EventAccess, OrganizerAccess, OrgContext
from admit.kit.http.errors import APIError, FieldErrors, not_found, validation_error
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.filtering import FilterSet, Ordering, parse_pk
from admit.kit.resources.pagination import paginate
from admit.kit.resources.rendered import RenderedReads, derive_renderer

M = TypeVar("M")
T = TypeVar("T")

ACTIONS = frozenset({"list", "retrieve", "create", "update", "delete"})


class Page(BaseModel, Generic[T]):
    count: int
    next: str | None
    previous: str | None
    results: list[T]


def validate_input(schema: type[BaseModel], data: dict[str, Any]) -> BaseModel:
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from None


REQUIRED = "This field is required."


def required_fields(schema: type[BaseModel]) -> list[str]:
    """The body keys a PUT (and a POST) must carry: the schema's fields without a default."""
    return [f.alias or name for name, f in schema.model_fields.items() if f.is_required()]


def missing_required(schema: type[BaseModel], raw: dict[str, Any]) -> dict[str, list[str]]:
    return {name: [REQUIRED] for name in required_fields(schema) if name not in raw}


def parse_update(
    schema: type[BaseModel], current: dict[str, Any], raw: dict[str, Any], partial: bool
) -> tuple[BaseModel, set[str]]:
    """Validated input for PUT and PATCH: the body over ``current`` (the stored state, as the
    read schema shows it), so an omitted field keeps its value in both. A PUT must also carry
    every required field; the missing ones are reported with the body's other errors."""
    supplied = set(raw) & set(schema.model_fields)
    merged = {**{k: current[k] for k in schema.model_fields if k in current}, **raw}
    missing = {} if partial else missing_required(schema, raw)
    try:
        data = schema.model_validate(merged)
    except ValidationError as exc:
        errors = validation_error(exc).errors
        if missing and isinstance(errors, dict):
            errors = {**errors, **missing}
        raise FieldErrors(errors) from None
    if missing:
        raise FieldErrors(missing)
    return data, supplied


class Resource(RenderedReads, Generic[M]):
    name: ClassVar[str]
    path: ClassVar[str]
    model: ClassVar[type[Any]]
    read_schema: ClassVar[type[BaseModel]]
    write_schema: ClassVar[type[BaseModel] | None] = None
    # What create answers, where it shows more than a read (a secret shown once).
    created_schema: ClassVar[type[BaseModel] | None] = None
    scope: ClassVar[str] = "event"
    read_permission: ClassVar[str | None] = None
    write_permission: ClassVar[str | None] = None
    filters: ClassVar[FilterSet] = FilterSet()
    ordering: ClassVar[Ordering | None] = None
    loader_options: ClassVar[Sequence[Any]] = ()
    actions: ClassVar[frozenset[str]] = ACTIONS
    parent_param: ClassVar[str | None] = None
    tag: ClassVar[str | None] = None

    # -- access and lookup ------------------------------------------------------------------

    def access(self, permission: str | None) -> OrganizerAccess | EventAccess:
        return EventAccess(permission) if self.scope == "event" else OrganizerAccess(permission)

    async def resolve_parent(self, ctx: OrgContext, value: str) -> Any:
        raise NotImplementedError

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        """Every query starts from the tenant named in the URL."""
        if self.scope == "event":
            return select(self.model).where(self.model.event_id == ctx.event.id)  # type: ignore[attr-defined]
        return select(self.model).where(self.model.organizer_id == ctx.organizer_id)

    def list_query(self, ctx: OrgContext) -> Select[Any]:
        query = self.filters.apply(self.base_query(ctx), ctx.request.query_params)
        if self.ordering is not None:
            query = self.ordering.apply(query, ctx.request)
        return query

    async def get_object(self, ctx: OrgContext, raw_pk: str) -> M:
        pk = parse_pk(raw_pk)
        query = (
            self.base_query(ctx)
            .where(self.model.id == pk)
            .options(*self.loader_options)
            .execution_options(populate_existing=True)
        )
        obj = (await ctx.session.execute(query)).scalars().first()
        if obj is None:
            raise not_found()
        return obj

    async def reload(self, ctx: OrgContext, obj: M) -> M:
        return await self.get_object(ctx, str(obj.id))  # type: ignore[attr-defined]

    # -- serialisation ------------------------------------------------------------------------

    def to_read(self, ctx: OrgContext, obj: M) -> Any:
        return obj

    def serialize(self, ctx: OrgContext, obj: M) -> dict[str, Any]:
        return self.read_schema.model_validate(self.to_read(ctx, obj)).model_dump(mode="json")

    def current_state(self, ctx: OrgContext, obj: M, raw: dict[str, Any]) -> dict[str, Any]:
        """The stored state an update's body is laid over (PUT and PATCH): the read form.
        A resource whose read form shows one value twice (a name and its parts) leaves out
        what the body replaces, so the merged state does not hold both."""
        return self.serialize(ctx, obj)

    def serialize_many(self, ctx: OrgContext, objs: Sequence[M]) -> list[dict[str, Any]]:
        return [self.serialize(ctx, o) for o in objs]

    # -- rendering (GET, see kit/resources/rendered.py) --------------------------------------------

    def plain_base(self) -> bool:
        """Whether ``base_query`` is the tenant's rows and ``list_query`` only adds the
        filters and the ordering: then statements built once serve unfiltered requests."""
        cls = type(self)
        return cls.base_query is Resource.base_query and cls.list_query is Resource.list_query

    def static_detail(self, ctx: OrgContext) -> bool:
        """Whether a detail GET is the tenant's row with the id (``get_object`` adds
        nothing): then a statement built once serves it."""
        return self.plain_base() and type(self).get_object is Resource.get_object

    # -- writing ------------------------------------------------------------------------------

    def new_object(self, ctx: OrgContext) -> M:
        obj = self.model()
        if self.scope == "event":
            obj.event_id = ctx.event.id  # type: ignore[attr-defined]
        else:
            obj.organizer_id = ctx.organizer_id
        return obj

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: M | None, supplied: set[str]
    ) -> None:
        """Rules that need the database (uniqueness, references); raise FieldErrors."""

    def apply(self, ctx: OrgContext, obj: M, data: BaseModel, supplied: set[str]) -> None:
        for key, value in data.model_dump().items():
            if hasattr(self.model, key):
                setattr(obj, key, value)

    async def perform_create(self, ctx: OrgContext, data: BaseModel, supplied: set[str]) -> M:
        obj = self.new_object(ctx)
        self.apply(ctx, obj, data, supplied)
        ctx.session.add(obj)
        await ctx.session.flush()
        return obj

    async def perform_update(
        self, ctx: OrgContext, obj: M, data: BaseModel, supplied: set[str]
    ) -> None:
        self.apply(ctx, obj, data, supplied)
        await ctx.session.flush()

    async def perform_delete(self, ctx: OrgContext, obj: M) -> Response:
        await ctx.session.delete(obj)
        await ctx.session.flush()
        return no_content()

    # -- handlers -----------------------------------------------------------------------------

    async def handle_list(self, ctx: OrgContext) -> Response:
        if self.renders(ctx):
            return await self.render_list(ctx)
        body = await paginate(
            ctx.request,
            ctx.session,
            self.list_query(ctx),
            lambda rows: self.serialize_many(ctx, rows),
            options=self.loader_options,
        )
        return JSONResponse(body)

    async def handle_retrieve(self, ctx: OrgContext, pk: str) -> Response:
        if self.renders(ctx):
            return await self.render_detail(ctx, pk)
        return JSONResponse(self.serialize(ctx, await self.get_object(ctx, pk)))

    async def handle_create(self, ctx: OrgContext) -> Response:
        assert self.write_schema is not None
        raw = await read_object(ctx.request)
        data = validate_input(self.write_schema, raw)
        supplied = set(raw) & set(self.write_schema.model_fields)
        await self.validate(ctx, data, None, supplied)
        obj = await flush_guard(self.perform_create(ctx, data, supplied))
        obj = await self.reload(ctx, obj)
        return JSONResponse(self.serialize(ctx, obj), status_code=201)

    async def handle_update(self, ctx: OrgContext, pk: str, partial: bool) -> Response:
        assert self.write_schema is not None
        obj = await self.get_object(ctx, pk)
        raw = await read_object(ctx.request)
        current = self.current_state(ctx, obj, raw)
        data, supplied = parse_update(self.write_schema, current, raw, partial)
        await self.validate(ctx, data, obj, supplied)
        await flush_guard(self.perform_update(ctx, obj, data, supplied))
        obj = await self.reload(ctx, obj)
        return JSONResponse(self.serialize(ctx, obj))

    async def handle_delete(self, ctx: OrgContext, pk: str) -> Response:
        obj = await self.get_object(ctx, pk)
        return await flush_guard(self.perform_delete(ctx, obj))

    async def prepare(self, ctx: OrgContext, params: dict[str, str]) -> None:
        if self.parent_param:
            ctx.extra["parent"] = await self.resolve_parent(ctx, params[self.parent_param])


async def flush_guard(awaitable: Any) -> Any:
    """A unique/foreign-key race that slipped past validation is a 409, not a 500."""
    try:
        return await awaitable
    except IntegrityError:
        raise APIError(
            409, "The request conflicts with the current state of the resource. Try again."
        ) from None


def _endpoint(handler: Any, dependency: Any, path_params: Sequence[str]) -> Any:
    """An endpoint whose signature declares the access dependency and extra path params."""

    async def endpoint(**kwargs: Any) -> Response:
        ctx = kwargs.pop("ctx")
        return await handler(ctx, kwargs)

    params = [
        inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=Depends(dependency)),
        *(
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=str, default=Path())
            for name in path_params
        ),
    ]
    endpoint.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return endpoint


# Every mounted resource, in mounting order (generated tests go over them).
MOUNTED: list[Resource[Any]] = []


def mount_crud(router: APIRouter, resource: Resource[Any]) -> None:
    """Registers the resource's routes on ``router`` (which carries the ``/api/v1`` prefix)."""
    MOUNTED.append(resource)
    derived = derive_renderer(resource, Resource)
    if derived is not None:
        type(resource).renderer = derived
    collection = f"{resource.path}/"
    detail = f"{resource.path}/{{id}}/"
    parents = [resource.parent_param] if resource.parent_param else []
    tags: list[str | Any] = [resource.tag or resource.name]
    read_dep = resource.access(resource.read_permission)
    write_dep = resource.access(resource.write_permission)
    body = json_body(resource.write_schema)

    async def do_list(ctx: OrgContext, params: dict[str, str]) -> Response:
        await resource.prepare_read(ctx, params)
        return await resource.handle_list(ctx)

    async def do_retrieve(ctx: OrgContext, params: dict[str, str]) -> Response:
        await resource.prepare_read(ctx, params)
        return await resource.handle_retrieve(ctx, params["id"])

    async def do_create(ctx: OrgContext, params: dict[str, str]) -> Response:
        await resource.prepare(ctx, params)
        return await resource.handle_create(ctx)

    async def do_put(ctx: OrgContext, params: dict[str, str]) -> Response:
        await resource.prepare(ctx, params)
        return await resource.handle_update(ctx, params["id"], partial=False)

    async def do_patch(ctx: OrgContext, params: dict[str, str]) -> Response:
        await resource.prepare(ctx, params)
        return await resource.handle_update(ctx, params["id"], partial=True)

    async def do_delete(ctx: OrgContext, params: dict[str, str]) -> Response:
        await resource.prepare(ctx, params)
        return await resource.handle_delete(ctx, params["id"])

    name = resource.name
    if "list" in resource.actions:
        router.add_api_route(
            collection,
            _endpoint(do_list, read_dep, parents),
            methods=["GET"],
            name=f"{name}-list",
            tags=tags,
            response_model=Page[resource.read_schema],  # type: ignore[name-defined]
        )
    if "create" in resource.actions:
        router.add_api_route(
            collection,
            _endpoint(do_create, write_dep, parents),
            methods=["POST"],
            name=f"{name}-create",
            tags=tags,
            status_code=201,
            response_model=resource.created_schema or resource.read_schema,
            openapi_extra=body,
        )
    if "retrieve" in resource.actions:
        router.add_api_route(
            detail,
            _endpoint(do_retrieve, read_dep, [*parents, "id"]),
            methods=["GET"],
            name=f"{name}-detail",
            tags=tags,
            response_model=resource.read_schema,
        )
    if "update" in resource.actions:
        router.add_api_route(
            detail,
            _endpoint(do_put, write_dep, [*parents, "id"]),
            methods=["PUT"],
            name=f"{name}-put",
            tags=tags,
            response_model=resource.read_schema,
            openapi_extra=body,
        )
        router.add_api_route(
            detail,
            _endpoint(do_patch, write_dep, [*parents, "id"]),
            methods=["PATCH"],
            name=f"{name}-patch",
            tags=tags,
            response_model=resource.read_schema,
            openapi_extra=body,
        )
    if "delete" in resource.actions:
        router.add_api_route(
            detail,
            _endpoint(do_delete, write_dep, [*parents, "id"]),
            methods=["DELETE"],
            name=f"{name}-delete",
            tags=tags,
            status_code=204,
        )
