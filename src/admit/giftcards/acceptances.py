"""Gift card acceptance ``O/giftcardacceptances/`` (an Admit extension; the reference manages
it in its web interface only): which organizers accept whose gift cards.

An acceptance lets the acceptor list the issuer's cards (``include_accepted=true``), read their
history and transact on them, and makes the acceptor redeem them by secret, so it needs both
sides: the issuer offers (POST, naming the acceptor's slug; PATCH/PUT ``active``) and the
accepting organizer accepts (PATCH/PUT ``accepted``); neither side alone makes it count. The
offer names a slug and is answered alike whether an organizer has it or not (nothing tells
the issuer which slugs exist). Accepting, or re-activating an accepted offer, is refused while
one of the issuer's cards shares a secret (ignoring case) with a card the acceptor can redeem
already. Both sides see it in their list and either side may end it (DELETE). Reading needs
``organizer.giftcards:read``, writing ``organizer.giftcards:write``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, or_, select
from starlette.responses import Response

from admit.giftcards import service
from admit.giftcards.schemas import (
    AcceptanceConsent,
    AcceptanceIn,
    AcceptanceOut,
    AcceptancePatch,
)
from admit.kit.http.body import read_object
from admit.kit.http.context import OrgContext
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.resources.crud import Resource, flush_guard, parse_update, validate_input
from admit.kit.resources.filtering import Filter, FilterSet, Ordering
from admit.kit.resources.pagination import paginate
from admit.models import GiftCardAcceptance, Organizer

ISSUER_ONLY = "Only the issuing organizer can change whether its gift cards are offered."
ACCEPTOR_ONLY = "Only the accepting organizer can accept gift cards of another organizer."
SHARED_SECRET = (
    "A gift card of this issuer has the same secret as a gift card the accepting organizer "
    "can redeem already."
)


def _by_slug(column: Any) -> Any:
    return lambda slug: column.in_(select(Organizer.id).where(Organizer.slug == slug))


FILTERS = FilterSet(
    (
        Filter.where("issuer", str, _by_slug(GiftCardAcceptance.issuer_id)),
        Filter.where("acceptor", str, lambda slug: GiftCardAcceptance.acceptor_slug == slug),
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
        return select(GiftCardAcceptance).where(
            or_(
                GiftCardAcceptance.issuer_id == ctx.organizer_id,
                GiftCardAcceptance.acceptor_slug == ctx.organizer_slug,
            )
        )

    async def render(
        self, ctx: OrgContext, rows: Sequence[GiftCardAcceptance]
    ) -> list[dict[str, Any]]:
        if not rows:
            return []
        ids = {r.issuer_id for r in rows}
        found = await ctx.session.execute(
            select(Organizer.id, Organizer.slug).where(Organizer.id.in_(ids))
        )
        slugs = {k: v for k, v in found}
        return [
            {
                "id": r.id,
                "issuer": slugs[r.issuer_id],
                "acceptor": r.acceptor_slug,
                "active": r.active,
                "accepted": r.accepted,
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
        # The slug is not looked up: an offer to a slug no organizer has is answered as any
        # other (and counts for nothing until an organizer with that slug accepts it).
        if data.acceptor == ctx.organizer_slug:
            raise FieldErrors.single("acceptor", "An organizer always accepts its own gift cards.")
        exists = await ctx.session.scalar(
            select(GiftCardAcceptance.id).where(
                GiftCardAcceptance.issuer_id == ctx.organizer_id,
                GiftCardAcceptance.acceptor_slug == data.acceptor,
            )
        )
        if exists is not None:
            raise FieldErrors.single("acceptor", "Your gift cards are offered to it already.")
        row = GiftCardAcceptance(
            issuer_id=ctx.organizer_id,
            acceptor_slug=data.acceptor,
            active=data.active,
            accepted=False,
        )
        ctx.session.add(row)
        await flush_guard(ctx.session.flush())
        return JSONResponse((await self.render(ctx, [row]))[0], status_code=201)

    async def handle_update(self, ctx: OrgContext, pk: str, partial: bool) -> Response:
        row = await self.get_object(ctx, pk)
        raw = await read_object(ctx.request)
        issuer = row.issuer_id == ctx.organizer_id
        if issuer:
            if "accepted" in raw and raw["accepted"] != row.accepted:
                raise APIError(403, ACCEPTOR_ONLY)
            data, _ = parse_update(AcceptancePatch, {"active": row.active}, raw, partial)
            assert isinstance(data, AcceptancePatch)
            if data.active and not row.active and row.accepted:
                await self._check_secrets(ctx, row, "active")
            row.active = data.active
        else:
            if "active" in raw and raw["active"] != row.active:
                raise APIError(403, ISSUER_ONLY)
            consent, _ = parse_update(AcceptanceConsent, {"accepted": row.accepted}, raw, partial)
            assert isinstance(consent, AcceptanceConsent)
            if consent.accepted and not row.accepted:
                if row.active:
                    await self._check_secrets(ctx, row, "accepted")
                row.acceptor_id = ctx.organizer_id
            row.accepted = consent.accepted
        await flush_guard(ctx.session.flush())
        return JSONResponse((await self.render(ctx, [row]))[0])

    async def _check_secrets(self, ctx: OrgContext, row: GiftCardAcceptance, field: str) -> None:
        """The acceptance is about to count: refused if the acceptor would hold two cards
        with one secret (under the lock that keeps cards from being issued meanwhile)."""
        await service.lock_acceptances(ctx.session)
        acceptor_id = row.acceptor_id if row.acceptor_id is not None else ctx.organizer_id
        if await service.shared_secrets(ctx.session, row.issuer_id, acceptor_id):
            raise FieldErrors.single(field, SHARED_SECRET)

    async def handle_delete(self, ctx: OrgContext, pk: str) -> Response:
        row = await self.get_object(ctx, pk)
        await ctx.session.delete(row)
        await flush_guard(ctx.session.flush())
        return no_content()
