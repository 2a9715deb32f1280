"""Gift cards, their transactions, and which organizers accept whose cards.

A card's ``value`` is a column kept in step with its transactions: every change of the value
writes one transaction row with the delta in the same database transaction, so the value can be
read (and guarded with a conditional UPDATE) without summing the history, and the history always
sums to the value.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import TABLE_OPTIONS, Base, JSONType, Money, UTCDateTime, utcnow


class GiftCard(Base):
    __tablename__ = "gift_cards"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    issuer_id: Mapped[int] = mapped_column(ForeignKey("organizers.id", ondelete="CASCADE"))
    secret: Mapped[str] = mapped_column(String(190))
    issuance: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    currency: Mapped[str] = mapped_column(String(10))
    testmode: Mapped[bool] = mapped_column(Boolean, default=False)
    expires: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    conditions: Mapped[str | None] = mapped_column(Text, nullable=True)
    value: Mapped[Decimal] = mapped_column(Money, default=Decimal("0.00"))
    owner_ticket_id: Mapped[int | None] = mapped_column(
        ForeignKey("order_positions.id", ondelete="SET NULL"), nullable=True, index=True
    )
    # The ticket whose purchase issued this card (items with ``issue_giftcard``).
    issued_in_id: Mapped[int | None] = mapped_column(
        ForeignKey("order_positions.id", ondelete="SET NULL"), nullable=True, index=True
    )

    __table_args__ = (
        # Secrets are typed in by people: unique per issuer whatever their case, and found
        # by ``lower(secret)`` through this index.
        Index("uq_gift_cards_issuer_secret_lower", "issuer_id", func.lower(secret), unique=True),
        # The last line of defence: no code path may take a card below zero.
        CheckConstraint("value >= 0", name="value_not_negative"),
        TABLE_OPTIONS,
    )


class GiftCardTransaction(Base):
    __tablename__ = "gift_card_transactions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    card_id: Mapped[int] = mapped_column(
        ForeignKey("gift_cards.id", ondelete="CASCADE"), index=True
    )
    datetime: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    value: Mapped[Decimal] = mapped_column(Money)
    order_id: Mapped[int | None] = mapped_column(
        ForeignKey("orders.id", ondelete="SET NULL"), nullable=True, index=True
    )
    payment_id: Mapped[int | None] = mapped_column(
        ForeignKey("order_payments.id", ondelete="SET NULL"), nullable=True
    )
    text: Mapped[str | None] = mapped_column(Text, nullable=True)
    info: Mapped[Any | None] = mapped_column(JSONType, nullable=True)
    # The organizer whose API call (or shop) made the change; may differ from the issuer.
    acceptor_id: Mapped[int | None] = mapped_column(
        ForeignKey("organizers.id", ondelete="SET NULL"), nullable=True
    )


class GiftCardAcceptance(Base):
    """``acceptor`` accepts (lists with ``include_accepted``, transacts on) cards of ``issuer``.

    Both sides consent: the issuer offers (``active``, naming the acceptor by slug, so the
    offer reveals nothing about which slugs exist) and the accepting organizer accepts
    (``accepted``; ``acceptor_id`` is set then). Only a row with both counts.
    """

    __tablename__ = "gift_card_acceptances"
    __table_args__ = (
        UniqueConstraint("issuer_id", "acceptor_id"),
        UniqueConstraint("issuer_id", "acceptor_slug"),
        TABLE_OPTIONS,
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    issuer_id: Mapped[int] = mapped_column(ForeignKey("organizers.id", ondelete="CASCADE"))
    acceptor_id: Mapped[int | None] = mapped_column(
        ForeignKey("organizers.id", ondelete="CASCADE"), index=True, nullable=True
    )
    acceptor_slug: Mapped[str] = mapped_column(String(50), index=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    accepted: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
