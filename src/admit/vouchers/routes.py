"""Vouchers ``E/vouchers/`` (CRUD) and ``E/vouchers/batch_create/`` (atomic).

Reading needs ``event.vouchers:read``, writing ``event.vouchers:write``. A voucher being
changed or deleted is locked (PostgreSQL ``FOR UPDATE``) so a concurrent sale redeeming it
runs before or after, never in between. Importing this module registers the blocking-voucher
quota counter and the seats vouchers hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Annotated, Any

from fastapi import Depends
from pydantic import BaseModel, ValidationError
from starlette.responses import Response

from admit.kit.http.body import read_list, read_object
from admit.kit.http.context import EventAccess, EventContext, OrgContext
from admit.kit.http.errors import NON_FIELD, FieldErrors, errors_from_pydantic, not_found
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.http.routing import api_router
from admit.kit.http.transaction import SAFE_METHODS
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import Resource, flush_guard, mount_crud, validate_input
from admit.kit.resources.filtering import (
    Filter,
    FilterSet,
    Ordering,
    parse_decimal,
    parse_int,
    parse_pk,
)
from admit.kit.resources.pagination import paginate
from admit.kit.stamps.catalog import event_pages
from admit.models import Voucher
from admit.notifications.notify import notify_each, notify_in_event
from admit.vouchers import blocking, render, seats, service
from admit.vouchers.rows import VOUCHER_ROWS
from admit.vouchers.schemas import VoucherIn, VoucherOut
from admit.vouchers.voucher_json import VOUCHER_SHAPE

READ = "event.vouchers:read"
WRITE = "event.vouchers:write"
PATH = "/organizers/{organizer}/events/{event}/vouchers"

router = api_router()

ADDED = "service.voucher.added"
CHANGED = "service.voucher.changed"
DELETED = "service.voucher.deleted"

MONEY_DIGITS = 11  # digits before the point that a Numeric(13, 2) column holds


def parse_value(raw: str) -> Decimal:
    """A decimal that can be compared with the ``value`` column (no 1e999999)."""
    value = parse_decimal(raw)
    if value.adjusted() >= MONEY_DIGITS:
        raise ValueError("Enter a valid number.")
    return value


FILTERS = FilterSet(
    (
        Filter.eq("code", Voucher.code),
        Filter.eq("max_usages", Voucher.max_usages, parse_int),
        Filter.eq("redeemed", Voucher.redeemed, parse_int),
        Filter.boolean("block_quota", Voucher.block_quota),
        Filter.boolean("allow_ignore_quota", Voucher.allow_ignore_quota),
        Filter.eq("price_mode", Voucher.price_mode),
        Filter.eq("value", Voucher.value, parse_value),
        Filter.eq("item", Voucher.item_id, parse_int),
        Filter.eq("variation", Voucher.variation_id, parse_int),
        Filter.eq("quota", Voucher.quota_id, parse_int),
        Filter.eq("tag", Voucher.tag),
        Filter.eq("subevent", Voucher.subevent_id, parse_int),
    )
)
ORDERING = Ordering(
    fields={
        "id": Voucher.id,
        "code": Voucher.code,
        "max_usages": Voucher.max_usages,
        "valid_until": Voucher.valid_until,
        "value": Voucher.value,
    },
    default=("id",),
    pk=Voucher.id,
)


class VoucherResource(Resource[Voucher]):
    name = "vouchers"
    path = PATH
    model = Voucher
    read_schema = VoucherOut
    write_schema = VoucherIn
    read_permission = READ
    write_permission = WRITE
    filters = FILTERS
    ordering = ORDERING
    # Creation is its own route below (same shape as batch_create).
    actions = frozenset({"list", "retrieve", "update", "delete"})
    renderer = VOUCHER_ROWS
    json_shape = VOUCHER_SHAPE
    # A redemption moves its voucher's stamp; a seat's guid never changes (seats are matched
    # by it, and one a voucher holds is never deleted).
    kept_by = event_pages(Voucher.last_modified)

    def static_detail(self, ctx: OrgContext) -> bool:
        return self.plain_base()  # ``get_object`` only adds the writers' row lock

    async def get_object(self, ctx: OrgContext, raw_pk: str) -> Voucher:
        """Writers get the row locked until commit (409 when the lock takes too long)."""
        pk = parse_pk(raw_pk)
        query = (
            self.base_query(ctx).where(Voucher.id == pk).execution_options(populate_existing=True)
        )
        if ctx.request.method not in SAFE_METHODS:
            query = query.with_for_update()
        obj = (await ctx.session.execute(query)).scalars().first()
        if obj is None:
            raise not_found()
        return obj

    def serialize(self, ctx: OrgContext, obj: Voucher) -> dict[str, Any]:
        # Only used for the PATCH merge; responses are rendered by ``render.render``.
        return ctx.extra["rendered"][obj.id]

    async def _render(self, ctx: OrgContext, objs: Sequence[Voucher]) -> list[dict[str, Any]]:
        bodies = await render.render(ctx.session, objs)
        ctx.extra["rendered"] = {b["id"]: b for b in bodies}
        return bodies

    async def handle_list(self, ctx: OrgContext) -> Response:
        if self.renders(ctx):
            return await self.render_list(ctx)
        body = await paginate(ctx.request, ctx.session, self.list_query(ctx), list)
        body["results"] = await self._render(ctx, body["results"])
        return JSONResponse(body)

    async def handle_retrieve(self, ctx: OrgContext, pk: str) -> Response:
        if self.renders(ctx):
            return await self.render_detail(ctx, pk)
        [body] = await self._render(ctx, [await self.get_object(ctx, pk)])
        return JSONResponse(body)

    async def handle_update(self, ctx: OrgContext, pk: str, partial: bool) -> Response:
        obj = await self.get_object(ctx, pk)
        await self._render(ctx, [obj])
        return await super().handle_update(ctx, pk, partial)

    async def reload(self, ctx: OrgContext, obj: Voucher) -> Voucher:
        await self._render(ctx, [obj])
        return obj

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: Voucher | None, supplied: set[str]
    ) -> None:
        """Everything is checked in ``perform_*`` (the rules need the quota lock)."""

    async def perform_update(
        self, ctx: OrgContext, obj: Voucher, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, VoucherIn) and isinstance(ctx, EventContext)
        await service.write(ctx.session, ctx.event, [data], [obj])
        await _notify(ctx, CHANGED, [obj])

    async def perform_delete(self, ctx: OrgContext, obj: Voucher) -> Response:
        voucher_id = obj.id
        await service.delete_voucher(ctx.session, obj)
        await notify_in_event(ctx, DELETED, voucher=voucher_id)
        return no_content()


async def _notify(ctx: OrgContext, action: str, written: Sequence[Voucher]) -> None:
    """One notification per voucher (``batch_create``: one per created voucher)."""
    await notify_each(
        ctx.session,
        action,
        [{"voucher": v.id} for v in written],
        organizer_id=ctx.organizer_id,
        event_id=ctx.event.id,  # type: ignore[attr-defined]
    )


vouchers = VoucherResource()


def _parse_entries(raw: list[Any]) -> list[VoucherIn]:
    """Every entry parsed; the 400 body lists one error object per entry ({} when fine)."""
    parsed: list[VoucherIn | None] = []
    errors: list[Any] = []
    for entry in raw:
        if not isinstance(entry, dict):
            kind = "list" if isinstance(entry, list) else type(entry).__name__
            errors.append({NON_FIELD: [f"Invalid data. Expected a dictionary, but got {kind}."]})
            parsed.append(None)
            continue
        try:
            parsed.append(VoucherIn.model_validate(entry))
            errors.append({})
        except ValidationError as exc:
            errors.append(errors_from_pydantic(exc.errors(include_url=False)))
            parsed.append(None)
    if any(errors):
        raise FieldErrors(errors)
    return [p for p in parsed if p is not None]


@router.post(
    f"{PATH}/",
    name="vouchers-create",
    tags=["vouchers"],
    status_code=201,
    response_model=VoucherOut,
    openapi_extra=json_body(VoucherIn),
)
async def create(ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]) -> Response:
    """One voucher; 409 with ``Retry-After`` when the quota it blocks is locked too long."""
    data = validate_input(VoucherIn, await read_object(ctx.request))
    assert isinstance(data, VoucherIn)
    [voucher] = await flush_guard(service.write(ctx.session, ctx.event, [data], [None]))
    await _notify(ctx, ADDED, [voucher])
    [body] = await render.render(ctx.session, [voucher])
    return JSONResponse(body, status_code=201)


# The most vouchers one batch_create creates (in one transaction, locks held throughout).
BATCH_LIMIT = 1000


@router.post(
    f"{PATH}/batch_create/",
    name="vouchers-batch-create",
    tags=["vouchers"],
    status_code=201,
    response_model=list[VoucherOut],
    openapi_extra=json_body(VoucherIn, many=True),
)
async def batch_create(ctx: Annotated[EventContext, Depends(EventAccess(WRITE))]) -> Response:
    """All vouchers or none; duplicate codes inside the batch are refused."""
    entries = _parse_entries(await read_list(ctx.request, BATCH_LIMIT))
    created = await flush_guard(
        service.write(ctx.session, ctx.event, entries, [None] * len(entries), many=True)
    )
    await _notify(ctx, ADDED, created)
    return JSONResponse(await render.render(ctx.session, created), status_code=201)


mount_crud(router, vouchers)

blocking.register()
seats.register(render.render_by_id)
