"""Gift cards ``O/giftcards/``: list, detail, create, PUT/PATCH, ``transact``, ``transactions``;
and ``O/giftcardacceptances/`` (see ``acceptances.py``).

Reading needs ``organizer.giftcards:read``, writing ``organizer.giftcards:write``. With
``include_accepted=true`` the cards of issuers that let this organizer accept theirs are
included (see ``acceptances.py``); such cards can be read and transacted on, not updated.
Cards are never deleted (405): their history is financial record.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from fastapi import Depends
from sqlalchemy import Select, func, select
from starlette.responses import Response

from admit.giftcards import issuance, service  # noqa: F401  (issuance registers its order hook)
from admit.giftcards.acceptances import AcceptanceResource
from admit.giftcards.render import TRANSACTION_ROWS, render_card, render_cards
from admit.giftcards.schemas import (
    GiftCardCreate,
    GiftCardOut,
    GiftCardUpdate,
    TransactIn,
    TransactionOut,
)
from admit.kit.http.body import read_object
from admit.kit.http.context import OrganizerAccess, OrgContext
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import Page, Resource, flush_guard, mount_crud, parse_update
from admit.kit.resources.crud import validate_input as validated
from admit.kit.resources.filtering import (
    Filter,
    FilterSet,
    Ordering,
    parse_bool,
    parse_decimal,
    parse_pk,
)
from admit.kit.resources.listing import Listing
from admit.kit.resources.pagination import paginate
from admit.models import GiftCard, GiftCardTransaction
from admit.notifications.notify import notify

READ = "organizer.giftcards:read"
WRITE = "organizer.giftcards:write"
BASE = "/organizers/{organizer}/giftcards"

router = api_router()


def parse_money(raw: str) -> Decimal:
    """A value a card can hold: bound as NUMERIC(13, 2), anything else would overflow or round."""
    value = parse_decimal(raw)
    if value.as_tuple().exponent < -2 or abs(value) > service.MAX_VALUE:  # type: ignore[operator]
        raise ValueError("Enter an amount with at most two decimal places, as a card can hold.")
    return value


FILTERS = FilterSet(
    (
        Filter.where("secret", str, lambda v: func.lower(GiftCard.secret) == func.lower(v)),
        Filter.eq("value", GiftCard.value, parse_money),
        Filter.where("expired", parse_bool, service.expired_clause),
        Filter.boolean("testmode", GiftCard.testmode),
        # Validated here, applied by the base query.
        Filter("include_accepted", parse_bool, lambda query, _value: query),
    )
)


def include_accepted(ctx: OrgContext) -> bool:
    raw = ctx.request.query_params.get("include_accepted")
    if not raw:
        return False
    try:
        return parse_bool(raw)
    except ValueError as exc:
        raise FieldErrors.single("include_accepted", str(exc)) from None


class GiftCardResource(Resource[GiftCard]):
    name = "giftcards"
    path = BASE
    model = GiftCard
    read_schema = GiftCardOut
    write_schema = GiftCardCreate
    scope = "organizer"
    read_permission = READ
    write_permission = WRITE
    filters = FILTERS
    ordering = Ordering(
        fields={
            "id": GiftCard.id,
            "issuance": GiftCard.issuance,
            "expires": GiftCard.expires,
            "value": GiftCard.value,
            "secret": GiftCard.secret,
        },
        default=("id",),
        pk=GiftCard.id,
    )

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        return select(GiftCard).where(service.visible(ctx.organizer_id, include_accepted(ctx)))

    async def handle_list(self, ctx: OrgContext) -> Response:
        body = await paginate(ctx.request, ctx.session, self.list_query(ctx), list)
        body["results"] = await render_cards(ctx, body["results"])
        return JSONResponse(body)

    async def handle_retrieve(self, ctx: OrgContext, pk: str) -> Response:
        return JSONResponse(await render_card(ctx, await self.get_object(ctx, pk)))

    async def handle_create(self, ctx: OrgContext) -> Response:
        raw = await read_object(ctx.request)
        data = validated(GiftCardCreate, raw)
        assert isinstance(data, GiftCardCreate)
        session = ctx.session
        if data.secret is None:
            secret = await service.new_secret(session, ctx.organizer_id)
        elif await service.secret_taken(session, ctx.organizer_id, data.secret):
            raise FieldErrors.single("secret", service.SECRET_TAKEN)
        else:
            secret = data.secret
        owner = None
        if data.owner_ticket is not None:
            owner = await service.resolve_owner_ticket(session, ctx.organizer_id, data.owner_ticket)
        card = GiftCard(
            issuer_id=ctx.organizer_id,
            secret=secret,
            currency=data.currency,
            testmode=data.testmode,
            expires=data.expires,
            conditions=data.conditions,
            value=data.value,
            owner_ticket_id=owner,
        )
        session.add(card)
        await flush_guard(session.flush())
        # The initial value is the card's first transaction, so the history sums to the value.
        service.record(session, card.id, data.value, ctx.organizer_id)
        await session.flush()
        await notify(session, service.CREATED, organizer_id=ctx.organizer_id, giftcard=card.id)
        return JSONResponse(await render_card(ctx, card), status_code=201)

    async def handle_update(self, ctx: OrgContext, pk: str, partial: bool) -> Response:
        card_id = parse_pk(pk)
        if include_accepted(ctx):
            visible = await ctx.session.scalar(
                select(GiftCard.issuer_id).where(
                    GiftCard.id == card_id, service.visible(ctx.organizer_id, True)
                )
            )
            if visible is not None and visible != ctx.organizer_id:
                raise service.accepted_only_by_transact()
        raw = await read_object(ctx.request)  # before taking the lock, not while holding it
        card = await service.lock_card(ctx.session, ctx.organizer_id, card_id)
        current = {
            "value": card.value,
            "expires": card.expires,
            "conditions": card.conditions,
            "owner_ticket": card.owner_ticket_id,
        }
        data, supplied = parse_update(GiftCardUpdate, current, raw, partial)
        assert isinstance(data, GiftCardUpdate)
        await self.apply_update(ctx, card, data, supplied)
        await flush_guard(ctx.session.flush())
        await notify(ctx.session, service.MODIFIED, organizer_id=ctx.organizer_id, giftcard=card.id)
        return JSONResponse(await render_card(ctx, card))

    async def apply_update(
        self, ctx: OrgContext, card: GiftCard, data: GiftCardUpdate, supplied: set[str]
    ) -> None:
        if data.owner_ticket is None:
            card.owner_ticket_id = None
        elif "owner_ticket" in supplied:
            card.owner_ticket_id = await service.resolve_owner_ticket(
                ctx.session, ctx.organizer_id, data.owner_ticket
            )
        card.expires = data.expires
        card.conditions = data.conditions
        if "value" in supplied:
            service.set_value(ctx.session, card, data.value, ctx.organizer_id)

    async def handle_delete(self, ctx: OrgContext, pk: str) -> Response:
        await self.get_object(ctx, pk)
        raise APIError(405, "Gift cards cannot be deleted.", headers={"Allow": "GET, PUT, PATCH"})


cards = GiftCardResource()
mount_crud(router, cards)
mount_crud(router, AcceptanceResource())


@router.post(
    f"{BASE}/{{id}}/transact/",
    response_model=GiftCardOut,
    tags=["giftcards"],
    name="giftcards-transact",
    openapi_extra=json_body(TransactIn),
)
async def transact(
    id: str, ctx: Annotated[OrgContext, Depends(OrganizerAccess(WRITE))]
) -> Response:
    """Atomically adds ``value`` (negative: takes it); 409 when the card lacks the credit."""
    card_id = parse_pk(id)
    accepted = include_accepted(ctx)
    data = validated(TransactIn, await read_object(ctx.request))
    assert isinstance(data, TransactIn)
    card = await service.transact(
        ctx.session,
        ctx.organizer_id,
        card_id,
        data.value,
        include_accepted=accepted,
        text=data.text,
        info=data.info,
    )
    return JSONResponse(await render_card(ctx, card))


@router.get(
    f"{BASE}/{{id}}/transactions/",
    response_model=Page[TransactionOut],
    tags=["giftcards"],
    name="giftcards-transactions",
)
async def transactions(
    id: str, ctx: Annotated[OrgContext, Depends(OrganizerAccess(READ))]
) -> Response:
    """The card's history, oldest first; it always sums to the card's value."""
    card = await cards.get_object(ctx, id)
    return await _TRANSACTIONS.respond(ctx.request, ctx.session, tenant=card.id)


# A card's transactions, oldest first: one statement (with the count) built once.
_TRANSACTIONS = Listing(
    TRANSACTION_ROWS,
    GiftCardTransaction.__table__,
    GiftCardTransaction.card_id,
    GiftCardTransaction.id,
    Ordering(
        fields={"datetime": GiftCardTransaction.datetime},
        default=("datetime",),
        pk=GiftCardTransaction.id,
    ),
)
