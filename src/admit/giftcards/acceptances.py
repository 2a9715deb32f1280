"""Gift card acceptance ``O/giftcardacceptances/`` (an Admit extension; the reference manages
it in its web interface only): which organizers accept whose gift cards.

An acceptance lets the acceptor list the issuer's cards (``include_accepted=true``), read their
history and transact on them, so only the issuer grants it (POST, naming the acceptor's slug)
and only the issuer can switch it on and off (PATCH/PUT ``active``). Both sides see it in their
list and either side may end it (DELETE): the acceptor need not keep accepting cards it no
longer wants. Reading needs ``organizer.giftcards:read``, writing ``organizer.giftcards:write``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, or_, select
from starlette.responses import Response

from admit.giftcards.schemas import AcceptanceIn, AcceptanceOut, AcceptancePatch
from admit.kit.body import read_object
from admit.kit.context import OrgContext
from admit.kit.crud import Resource, flush_guard, parse_update, validate_input
from admit.kit.errors import APIError, FieldErrors
from admit.kit.filtering import Filter, FilterSet, Ordering
from admit.kit.pagination import paginate
from admit.kit.responses import JSONResponse, no_content
from admit.models import GiftCardAcceptance, Organizer

ISSUER_ONLY = "Only the issuing organizer can change whether its gift cards are accepted."


def _by_slug(column: Any) -> Any:
    return lambda slug: column.in_(select(Organizer.id).where(Organizer.slug == slug))


FILTERS = FilterSet(
    (
        Filter.where("issuer", str, _by_slug(GiftCardAcceptance.issuer_id)),
        Filter.where("acceptor", str, _by_slug(GiftCardAcceptance.acceptor_id)),
        Filter.boolean("active", GiftCardAcceptance.active),
    )
)


class AcceptanceResource(Resource[GiftCardAcceptance]):
    name = "giftcardacceptances"
    path = "/organizers/{organizer}/giftcardacceptances"
    model = GiftCardAcceptance
    read_schema = AcceptanceOut
    write_schema = AcceptanceIn
    scope = "organizer"
    read_permission = "organizer.giftcards:read"
    write_permission = "organizer.giftcards:write"
    filters = FILTERS
    ordering = Ordering(
        fields={"id": GiftCardAcceptance.id, "created": GiftCardAcceptance.created},
        default=("id",),
        pk=GiftCardAcceptance.id,
    )

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        org = ctx.organizer_id
        return select(GiftCardAcceptance).where(
            or_(GiftCardAcceptance.issuer_id == org, GiftCardAcceptance.acceptor_id == org)
        )

    async def render(
        self, ctx: OrgContext, rows: Sequence[GiftCardAcceptance]
    ) -> list[dict[str, Any]]:
        if not rows:
            return []
        ids = {r.issuer_id for r in rows} | {r.acceptor_id for r in rows}
        found = await ctx.session.execute(
            select(Organizer.id, Organizer.slug).where(Organizer.id.in_(ids))
        )
        slugs = {k: v for k, v in found}
        return [
            {
                "id": r.id,
                "issuer": slugs[r.issuer_id],
                "acceptor": slugs[r.acceptor_id],
                "active": r.active,
                "created": r.created,
            }
            for r in rows
        ]

    async def handle_list(self, ctx: OrgContext) -> Response:
        body = await paginate(ctx.request, ctx.session, self.list_query(ctx), list)
        body["results"] = await self.render(ctx, body["results"])
        return JSONResponse(body)

    async def handle_retrieve(self, ctx: OrgContext, pk: str) -> Response:
        row = await self.get_object(ctx, pk)
        return JSONResponse((await self.render(ctx, [row]))[0])

    async def handle_create(self, ctx: OrgContext) -> Response:
        data = validate_input(AcceptanceIn, await read_object(ctx.request))
        assert isinstance(data, AcceptanceIn)
        acceptor_id = await ctx.session.scalar(
            select(Organizer.id).where(Organizer.slug == data.acceptor)
        )
        if acceptor_id is None:
            raise FieldErrors.single(
                "acceptor", f'Object with slug="{data.acceptor}" does not exist.'
            )
        if acceptor_id == ctx.organizer_id:
            raise FieldErrors.single("acceptor", "An organizer always accepts its own gift cards.")
        exists = await ctx.session.scalar(
            select(GiftCardAcceptance.id).where(
                GiftCardAcceptance.issuer_id == ctx.organizer_id,
                GiftCardAcceptance.acceptor_id == acceptor_id,
            )
        )
        if exists is not None:
            raise FieldErrors.single("acceptor", "This organizer already accepts your gift cards.")
        row = GiftCardAcceptance(
            issuer_id=ctx.organizer_id, acceptor_id=acceptor_id, active=data.active
        )
        ctx.session.add(row)
        await flush_guard(ctx.session.flush())
        return JSONResponse((await self.render(ctx, [row]))[0], status_code=201)

    async def handle_update(self, ctx: OrgContext, pk: str, partial: bool) -> Response:
        row = await self.get_object(ctx, pk)
        if row.issuer_id != ctx.organizer_id:
            raise APIError(403, ISSUER_ONLY)
        raw = await read_object(ctx.request)
        data, _supplied = parse_update(AcceptancePatch, {"active": row.active}, raw, partial)
        assert isinstance(data, AcceptancePatch)
        row.active = data.active
        await flush_guard(ctx.session.flush())
        return JSONResponse((await self.render(ctx, [row]))[0])

    async def handle_delete(self, ctx: OrgContext, pk: str) -> Response:
        row = await self.get_object(ctx, pk)
        await ctx.session.delete(row)
        await flush_guard(ctx.session.flush())
        return no_content()
