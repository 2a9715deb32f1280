"""Invoice numbers: a prefix and a counter, without gaps or duplicates.

The counter is a row per organizer and prefix (``invoice_counters``). Taking a number is one
``UPDATE … SET last = last + 1 … RETURNING last`` in the transaction that writes the invoice:
the update holds the row's exclusive lock (the lock ``SELECT … FOR UPDATE`` would take) until
that transaction ends, so a concurrent issuer waits and then reads the incremented value, and
a transaction that rolls back gives its number back with everything else. ``MAX()+1`` over the
invoices would hand the same number to two concurrent issuers; a database sequence would leave
a gap for every rolled-back transaction. The first number of a prefix inserts the row (``ON
CONFLICT DO NOTHING``: of two concurrent first issuers one inserts, both then update).

Waiting is bounded by the connection's ``lock_timeout``: past it the request fails with 409
and ``Retry-After``, like every other lock conflict.

The prefix is the event's ``invoice_numbers_prefix`` (empty: the event's slug in capitals and
a dash), with ``%Y``/``%y``/``%m``/``%d`` taken from the issue date; cancellations use
``invoice_numbers_prefix_cancellations`` when set; test-mode orders add ``TEST-``. Events of an
organizer that share a prefix share one sequence. With ``invoice_numbers_consecutive`` off, the
number is the order code and a counter of that order's invoices (``ABC12-1``, ``ABC12-2``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import bindparam, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from admit.invoices.settings_keys import setting
from admit.models import Event, InvoiceCounter, Order

_BUMP = (
    update(InvoiceCounter)
    .where(
        InvoiceCounter.organizer_id == bindparam("b_organizer"),
        InvoiceCounter.prefix == bindparam("b_prefix"),
    )
    .values(last=InvoiceCounter.last + 1)
    .returning(InvoiceCounter.last)
)


@dataclass(frozen=True)
class Number:
    prefix: str
    invoice_no: str

    @property
    def full(self) -> str:
        return self.prefix + self.invoice_no


def prefix_for(event: Event, order: Order, issued: dt.date, *, cancellation: bool) -> str:
    """The prefix an invoice of ``order`` issued on ``issued`` gets."""
    raw = ""
    if cancellation:
        raw = setting(event, "invoice_numbers_prefix_cancellations") or ""
    if not raw:
        raw = setting(event, "invoice_numbers_prefix") or f"{event.slug.upper()}-"
    prefix = (
        raw.replace("%Y", f"{issued.year:04d}")
        .replace("%y", f"{issued.year % 100:02d}")
        .replace("%m", f"{issued.month:02d}")
        .replace("%d", f"{issued.day:02d}")
        .replace("%%", "%")
    )
    return f"{prefix}TEST-" if order.testmode else prefix


async def create_counter(session: AsyncSession, organizer_id: int, counter: str) -> None:
    """Creates the counter row named ``counter`` at 0 (of two concurrent creators one
    inserts, the other's insert does nothing)."""
    bind = session.get_bind()
    insert = postgresql.insert if bind.dialect.name == "postgresql" else sqlite.insert
    await session.execute(
        insert(InvoiceCounter)
        .values(organizer_id=organizer_id, prefix=counter, last=0)
        .on_conflict_do_nothing(index_elements=["organizer_id", "prefix"])
    )


async def take(session: AsyncSession, organizer_id: int, counter: str) -> int:
    """The next value of the counter named ``counter`` (1 for a new one), locked until the
    session's transaction ends."""
    params = {"b_organizer": organizer_id, "b_prefix": counter}
    value = (await session.execute(_BUMP, params)).scalar_one_or_none()
    if value is not None:
        return int(value)
    await create_counter(session, organizer_id, counter)
    return int((await session.execute(_BUMP, params)).scalar_one())


@dataclass(frozen=True)
class Sequence:
    """Where a new invoice's number comes from: its prefix, the counter row's name, and the
    number's form (``width`` digits, zero-padded; None: the order code and a counter)."""

    prefix: str
    counter: str
    width: int | None


def sequence_for(event: Event, order: Order, issued: dt.date, *, cancellation: bool) -> Sequence:
    prefix = prefix_for(event, order, issued, cancellation=cancellation)
    if setting(event, "invoice_numbers_consecutive"):
        width = int(setting(event, "invoice_numbers_counter_length"))
        return Sequence(prefix, prefix, width)
    # Per order: the counter is named after the prefix and the order code (the row is the
    # same kind of lock, so two invoices of one order never share a number either).
    return Sequence(prefix, f"{prefix}\x1f{order.code}", None)
