"""Gift card rules: which cards an organizer sees, secrets, owner tickets, value changes.

Every change of a card's value goes through :func:`transact` or :func:`set_value`, which write
the new value and one transaction row with the delta in the request's transaction, so the
value column always equals the sum of the card's transactions. :func:`transact` is a single
conditional ``UPDATE … RETURNING``: concurrent debits can never take a card below zero, on
PostgreSQL (the row lock serialises them and the condition is re-checked) and on SQLite
(writers are serialised).
"""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnElement, Row, and_, func, insert, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from admit.db import utcnow
from admit.kit.http.errors import APIError, FieldErrors, not_found
from admit.models import (
    Event,
    GiftCard,
    GiftCardAcceptance,
    GiftCardTransaction,
    OrderPosition,
)
from admit.notifications.notify import GIFTCARD_TRANSACTION_MANUAL, notification_insert

# Upper-case letters and digits without the look-alikes I/1, O/0, L, S/5, Z/2, B/8: read from
# paper or a phone screen and typed at a box office.
SECRET_ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679"
SECRET_LENGTH = 16  # 25**16 ≈ 5.4e22: not guessable, even with many cards issued
MAX_VALUE = Decimal("99999999999.99")  # what a NUMERIC(13, 2) column holds
# Notification types (``transact`` records ``GIFTCARD_TRANSACTION_MANUAL``: booked by hand).
CREATED = "service.giftcards.created"
MODIFIED = "service.giftcards.modified"

INSUFFICIENT_CREDIT = "The gift card does not have sufficient credit for this operation."
VALUE_TOO_LARGE = "The gift card's value would exceed the largest value that can be stored."
SECRET_TAKEN = (
    "A gift card with this secret already exists for this organizer or one whose gift cards "
    "it accepts."
)


def _counts(acceptance: Any = GiftCardAcceptance) -> ColumnElement[bool]:
    """An acceptance both sides agreed to: offered (and kept active) by the issuer, accepted
    by the acceptor."""
    return and_(acceptance.active.is_(True), acceptance.accepted.is_(True))


def accepted_issuers(organizer_id: int) -> Any:
    """Ids of the organizers whose cards ``organizer_id`` accepts (a subquery)."""
    return select(GiftCardAcceptance.issuer_id).where(
        GiftCardAcceptance.acceptor_id == organizer_id, _counts()
    )


def visible(organizer_id: int, include_accepted: bool) -> ColumnElement[bool]:
    """The cards an organizer may work with: its own, plus accepted ones when asked for."""
    own = GiftCard.issuer_id == organizer_id
    if not include_accepted:
        return own
    return or_(own, GiftCard.issuer_id.in_(accepted_issuers(organizer_id)))


def random_secret() -> str:
    return "".join(secrets.choice(SECRET_ALPHABET) for _ in range(SECRET_LENGTH))


# PostgreSQL advisory locks (transaction-scoped) that keep "no organizer can redeem two cards
# with one secret" true under concurrency: every issuance takes the acceptance graph's lock
# shared and its secret's lock exclusively (two issuers creating one secret for a common
# acceptor: the second waits, then sees the first's card); accepting or re-activating an
# acceptance takes the graph's lock exclusively (no card is issued while the graph changes).
# SQLite serialises writers already.
_LOCKS = 0x4743  # "GC"
_GRAPH = 0


async def _postgres(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "postgresql"


async def lock_secret(session: AsyncSession, secret: str) -> None:
    if await _postgres(session):
        await session.execute(
            text("SELECT pg_advisory_xact_lock_shared(:ns, :graph)"),
            {"ns": _LOCKS, "graph": _GRAPH},
        )
        await session.execute(
            text("SELECT pg_advisory_xact_lock(:ns + 1, hashtext(lower(:secret)))"),
            {"ns": _LOCKS, "secret": secret},
        )


async def lock_acceptances(session: AsyncSession) -> None:
    if await _postgres(session):
        await session.execute(
            text("SELECT pg_advisory_xact_lock(:ns, :graph)"), {"ns": _LOCKS, "graph": _GRAPH}
        )


async def secret_taken(session: AsyncSession, organizer_id: int, secret: str) -> bool:
    """Whether a new card of ``organizer_id`` with ``secret`` (ignoring case) would give some
    organizer two cards it can redeem under one secret: the issuer itself (its own cards and
    those it accepts) or any organizer accepting the issuer's cards (and what they accept).
    Codes are typed in by people, so two cards differing only in case would be confused;
    both sides are folded by the database, as in the unique index. Takes the locks that
    keep the answer true until the card is inserted in this transaction."""
    await lock_secret(session, secret)
    acceptors = select(GiftCardAcceptance.acceptor_id).where(
        GiftCardAcceptance.issuer_id == organizer_id, _counts()
    )
    reached = select(GiftCardAcceptance.issuer_id).where(
        or_(
            GiftCardAcceptance.acceptor_id == organizer_id,
            GiftCardAcceptance.acceptor_id.in_(acceptors),
        ),
        _counts(),
    )
    query = select(GiftCard.id).where(
        or_(
            GiftCard.issuer_id == organizer_id,
            GiftCard.issuer_id.in_(acceptors),
            GiftCard.issuer_id.in_(reached),
        ),
        func.lower(GiftCard.secret) == func.lower(secret),
    )
    return (await session.scalar(query.limit(1))) is not None


async def shared_secrets(session: AsyncSession, issuer_id: int, acceptor_id: int) -> bool:
    """Whether accepting ``issuer_id``'s cards would give ``acceptor_id`` two cards with one
    secret: one of the issuer's against the acceptor's own or another accepted issuer's.
    The caller holds :func:`lock_acceptances`."""
    other = aliased(GiftCard)
    already = or_(
        other.issuer_id == acceptor_id,
        other.issuer_id.in_(
            select(GiftCardAcceptance.issuer_id).where(
                GiftCardAcceptance.acceptor_id == acceptor_id,
                GiftCardAcceptance.issuer_id != issuer_id,
                _counts(),
            )
        ),
    )
    query = (
        select(GiftCard.id)
        .join(other, func.lower(other.secret) == func.lower(GiftCard.secret))
        .where(GiftCard.issuer_id == issuer_id, other.issuer_id != issuer_id, already)
    )
    return (await session.scalar(query.limit(1))) is not None


async def new_secret(session: AsyncSession, organizer_id: int) -> str:
    """A fresh secret. With this alphabet and length a collision is practically impossible;
    it is checked anyway, and the unique index catches the remaining race."""
    while True:
        secret = random_secret()
        if not await secret_taken(session, organizer_id, secret):
            return secret


async def resolve_owner_ticket(session: AsyncSession, organizer_id: int, ref: int | str) -> int:
    """An order position of one of the organizer's events, by id or by ticket secret."""
    query = (
        select(OrderPosition.id)
        .join(Event, Event.id == OrderPosition.event_id)
        .where(Event.organizer_id == organizer_id)
    )
    if isinstance(ref, int):
        query = query.where(OrderPosition.id == ref) if 0 < ref < 2**31 else None
    else:
        query = query.where(
            or_(OrderPosition.secret == ref, OrderPosition.pseudonymization_id == ref)
        )
    found = await session.scalar(query.limit(1)) if query is not None else None
    if found is None:
        raise FieldErrors.single("owner_ticket", f'Invalid pk "{ref}" - object does not exist.')
    return found


def record(
    session: AsyncSession,
    card_id: int,
    delta: Decimal,
    acceptor_id: int | None,
    *,
    text: str | None = None,
    info: dict[str, Any] | None = None,
    order_id: int | None = None,
    payment_id: int | None = None,
) -> GiftCardTransaction:
    """Adds the transaction row for a value change made in the same database transaction."""
    row = GiftCardTransaction(
        card_id=card_id,
        datetime=utcnow(),
        value=delta,
        text=text,
        info=info,
        acceptor_id=acceptor_id,
        order_id=order_id,
        payment_id=payment_id,
    )
    session.add(row)
    return row


async def transact(
    session: AsyncSession,
    organizer_id: int,
    card_id: int,
    delta: Decimal,
    *,
    include_accepted: bool,
    text: str | None = None,
    info: dict[str, Any] | None = None,
) -> Row[Any]:
    """Changes a card's value by ``delta`` unless that would leave it below zero (409).

    One guarded UPDATE decides; only when it matches no row is the card read again to say
    why (unknown card 404, too little credit 409, value too large 400). The transaction row
    and its ``service.giftcards.transaction.manual`` notification follow in one more
    statement on PostgreSQL.
    """
    new_value = func.round(GiftCard.value + delta, 2, type_=GiftCard.value.type)
    guarded = (
        update(GiftCard)
        .where(
            GiftCard.id == card_id,
            visible(organizer_id, include_accepted),
            new_value >= 0,
            new_value <= MAX_VALUE,
        )
        .values(value=new_value)
        .returning(*GiftCard.__table__.columns)
        .execution_options(synchronize_session=False)
    )
    row = (await session.execute(guarded)).first()
    if row is None:
        found = await session.scalar(
            select(GiftCard.id).where(
                GiftCard.id == card_id, visible(organizer_id, include_accepted)
            )
        )
        if found is None:
            raise not_found()
        # Decided by the sign, not by re-reading the value, which a concurrent transaction may
        # have changed since: only a debit can go below zero, only a credit past the maximum.
        if delta < 0:
            raise FieldErrors.single("value", INSUFFICIENT_CREDIT, status=409)
        raise FieldErrors.single("value", VALUE_TOO_LARGE)
    # A Core INSERT: the ORM unit of work would cost more CPU than the statement itself.
    booked = insert(GiftCardTransaction).values(
        card_id=card_id,
        datetime=utcnow(),
        value=delta,
        text=text,
        info=info,
        acceptor_id=organizer_id,
    )
    # The card's issuer is told, also when an accepting organizer booked it: it is their card.
    notice = notification_insert(
        session, GIFTCARD_TRANSACTION_MANUAL, organizer_id=row.issuer_id, giftcard=card_id
    )
    if session.get_bind().dialect.name == "postgresql":
        # One round trip for both rows: the notification as a data-modifying CTE.
        await session.execute(booked.add_cte(notice.cte("notice")))
    else:
        await session.execute(booked)
        await session.execute(notice)
    return row


def set_value(session: AsyncSession, card: GiftCard, value: Decimal, acceptor_id: int) -> None:
    """A direct change of the value (PUT/PATCH) on a card locked by the caller, recorded as
    a transaction of the difference like any other change."""
    delta = value - card.value
    if delta == 0:
        return
    card.value = value
    record(session, card.id, delta, acceptor_id)


async def lock_card(session: AsyncSession, organizer_id: int, card_id: int) -> GiftCard:
    """The organizer's own card, row-locked for a read-modify-write (PUT/PATCH)."""
    card = (
        await session.execute(
            select(GiftCard)
            .where(GiftCard.id == card_id, GiftCard.issuer_id == organizer_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
    ).scalar_one_or_none()
    if card is None:
        raise not_found()
    return card


def accepted_only_by_transact() -> APIError:
    return APIError(403, "Accepted gift cards cannot be updated, use transact instead.")


def expired_clause(expired: bool) -> ColumnElement[bool]:
    now = utcnow()
    if expired:
        return and_(GiftCard.expires.is_not(None), GiftCard.expires < now)
    return or_(GiftCard.expires.is_(None), GiftCard.expires >= now)
