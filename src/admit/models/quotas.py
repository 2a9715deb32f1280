"""Quotas: how many of a set of items/variations (per subevent) may be sold."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, ForeignKey, Integer, String, Table, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from admit.db import Base
from admit.models.catalog import Item, ItemVariation

quota_items = Table(
    "quota_items",
    Base.metadata,
    Column("quota_id", ForeignKey("quotas.id", ondelete="CASCADE"), primary_key=True),
    Column("item_id", ForeignKey("items.id", ondelete="CASCADE"), primary_key=True, index=True),
)
quota_variations = Table(
    "quota_variations",
    Base.metadata,
    Column("quota_id", ForeignKey("quotas.id", ondelete="CASCADE"), primary_key=True),
    Column(
        "variation_id",
        ForeignKey("item_variations.id", ondelete="CASCADE"),
        primary_key=True,
        index=True,
    ),
)


class Quota(Base):
    __tablename__ = "quotas"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"), index=True)
    subevent_id: Mapped[int | None] = mapped_column(
        ForeignKey("subevents.id", ondelete="CASCADE"), nullable=True, index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    size: Mapped[int | None] = mapped_column(Integer, nullable=True)
    position: Mapped[int] = mapped_column(Integer, default=0)
    close_when_sold_out: Mapped[bool] = mapped_column(Boolean, default=False)
    closed: Mapped[bool] = mapped_column(Boolean, default=False)
    release_after_exit: Mapped[bool] = mapped_column(Boolean, default=False)
    ignore_for_event_availability: Mapped[bool] = mapped_column(Boolean, default=False)

    items: Mapped[list[Item]] = relationship(
        secondary=quota_items, lazy="raise", passive_deletes=True, order_by=Item.id
    )
    variations: Mapped[list[ItemVariation]] = relationship(
        secondary=quota_variations, lazy="raise", passive_deletes=True, order_by=ItemVariation.id
    )


class SalesCount(Base):
    """Running totals per product (item, variation, date) of what orders and carts take.

    Availability sums a few of these rows instead of counting positions, so it costs the same
    with 100 or 100,000 tickets sold. ``quotas/ledger.py`` keeps them exact: every change of
    positions, order states or cart rows updates them in the same transaction. ``0`` stands
    for "no variation" / "no date" (a key column cannot be null).
    """

    __tablename__ = "sales_counts"

    item_id: Mapped[int] = mapped_column(
        ForeignKey("items.id", ondelete="CASCADE"), primary_key=True
    )
    variation_id: Mapped[int] = mapped_column(Integer, primary_key=True, default=0)
    subevent_id: Mapped[int] = mapped_column(Integer, primary_key=True, default=0)
    pending: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    paid: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    carts: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
