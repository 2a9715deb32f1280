"""Writing an invoice in as few statements as it takes: numbers, rows, lines and its job.

Issuing runs inside the transaction that makes an order paid, so every round trip counts
(issue 33 allows the invoice 10 % of a payment's throughput). On PostgreSQL one statement does
it all, with data-modifying CTEs: the ids of the invoice and of its rendering job are drawn
from their sequences, the counter row is incremented (``UPDATE … RETURNING``, which holds the
row's lock until the commit), and the job, the invoice (with its number and job) and all its
lines are inserted from those values. The counter's lock is therefore taken by the statement
that writes the invoice and held only until the commit follows it. Every insert selects from
the counter's result, so when the counter row does not exist yet nothing is written: the row
is inserted (``ON CONFLICT DO NOTHING``) and the statement runs again. The statement also
carries the transaction's deferred hot writes (``kit/lanes/hot_writes``: a payment's sales
totals), so a payment that issues its invoice makes no round trip more than one that does not,
and the counter is locked before the totals, as by a cancellation (its number mid-transaction,
the totals at the end). One pair still takes them the other way round: an order placed with
its invoice (``invoice_generate`` "True") locks the totals during its quota check and the
counter at the end, so when at the same moment a payment of the same product issues the
first invoice of another order (placed before invoicing on placement was switched on),
PostgreSQL may end the pair's deadlock after a second with a 409 to one of them.

SQLite (tests, small installations) serialises writers anyway and gets the plain sequence:
the number, the invoice, its job, the job's id on the invoice, the lines.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from sqlalchemy import (
    Integer,
    String,
    Text,
    bindparam,
    cast,
    exists,
    func,
    insert,
    literal,
    select,
    true,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from admit.invoices import content, numbers
from admit.invoices.content import LineData
from admit.jobs.queue import enqueue, kick_after_commit, new_job_values
from admit.kit.lanes import hot_writes
from admit.models import Invoice, InvoiceCounter, InvoiceLine, Job, Organizer

RENDER_KIND = "invoices.render"

_Canceling = aliased(Invoice)


def in_force(order_id: Any) -> Any:
    """Whether the order has an invoice in force: one that is no cancellation and has no
    cancellation referring to it."""
    return exists().where(
        Invoice.order_id == order_id,
        Invoice.is_cancellation.is_(False),
        ~exists().where(_Canceling.refers_id == Invoice.id, _Canceling.is_cancellation.is_(True)),
    )


@dataclass(frozen=True)
class Issued:
    """What the issuer learns about the invoice it wrote (the row is not loaded)."""

    id: int
    full_invoice_no: str
    render_job_id: int


@dataclass(frozen=True)
class Plan:
    """An invoice to write: its columns (without id, number and job) and its lines."""

    organizer_id: int
    event_id: int
    row: dict[str, Any]
    lines: Sequence[LineData]
    prefix: str
    counter: str  # the counter row's name (the prefix, or prefix and order code)
    width: int | None  # zero-padding of a consecutive number; None: ``<code>-<n>``
    order_code: str

    def number(self, value: int) -> numbers.Number:
        if self.width is None:
            return numbers.Number(self.prefix, f"{self.order_code}-{value}")
        return numbers.Number(self.prefix, f"{value:0{self.width}d}")


async def write(session: AsyncSession, plan: Plan) -> Issued:
    """Writes the planned invoice in the session's transaction; its job is handed to the
    broker after the commit."""
    issued = await _write(session, plan, guarded=False)
    if issued is None:
        raise RuntimeError("invoice counter row missing after creating it")
    return issued


async def write_unless_invoiced(session: AsyncSession, plan: Plan) -> Issued | None:
    """As :func:`write`, unless the order has an invoice in force (then nothing is written
    and None returned): the question is part of the writing statement, so issuing on
    payment asks no separate one. The caller holds the order's row, so no other issuer of
    the order can slip in between."""
    return await _write(session, plan, guarded=True)


# Shared counters (organizer, name) this process has taken a number from, per database
# (engine): they exist (a counter row goes only with its organizer, whose id is not reused).
_COUNTERS_SEEN: weakref.WeakKeyDictionary[Any, set[tuple[int, str]]] = weakref.WeakKeyDictionary()
_SEEN_AT_MOST = 10_000


async def _write(session: AsyncSession, plan: Plan, *, guarded: bool) -> Issued | None:
    if session.get_bind().dialect.name != "postgresql":
        return await _write_plain(session, plan, guarded)
    shared = (plan.organizer_id, plan.counter) if plan.width is not None else None
    seen = _COUNTERS_SEEN.setdefault(session.get_bind(), set())
    if shared is not None and shared not in seen:
        # Made sure of before the statement: the statement also carries the transaction's
        # hot writes (a payment's sales totals), and must lock the counter before them, as
        # every issuer does. Finding the counter missing would have taken the totals' lock
        # first and the counter's after, which deadlocks against an issuer that found it.
        await numbers.create_counter(session, plan.organizer_id, plan.counter)
    issued, invoiced = await _write_pg(session, plan, guarded)
    if issued is None and not invoiced:
        # The first number of an order's own counter: create its row, then again (the
        # order's row, locked by the caller, keeps other issuers of this counter out).
        await numbers.create_counter(session, plan.organizer_id, plan.counter)
        issued, invoiced = await _write_pg(session, plan, guarded)
    if issued is not None:
        if shared is not None and shared not in seen:
            if len(seen) >= _SEEN_AT_MOST:
                seen.clear()
            seen.add(shared)
        kick_after_commit(session, issued.render_job_id, soon=True)  # a PDF: see dispatch
    elif not invoiced:
        raise RuntimeError("invoice counter row missing after creating it")
    return issued


def _line_rows(invoice_id: Any, lines: Sequence[LineData]) -> list[dict[str, Any]]:
    return [
        {"invoice_id": invoice_id, "position": index, **content.line_values(line)}
        for index, line in enumerate(lines, start=1)
    ]


async def _write_plain(session: AsyncSession, plan: Plan, guarded: bool) -> Issued | None:
    if guarded and await session.scalar(select(in_force(plan.row["order_id"]))):
        return None
    value = await numbers.take(session, plan.organizer_id, plan.counter)
    number = plan.number(value)
    row = {**plan.row, "prefix": number.prefix, "invoice_no": number.invoice_no,
           "full_invoice_no": number.full}  # fmt: skip
    if not row.get("invoice_from_name"):
        named = select(_organizer_name()).params(w_organizer=plan.organizer_id)
        row["invoice_from_name"] = await session.scalar(named) or ""
    invoice_id = await session.scalar(insert(Invoice).values(row).returning(Invoice.id))
    assert invoice_id is not None
    job_id, _ = await enqueue(
        session,
        RENDER_KIND,
        {"invoice": invoice_id},
        organizer_id=plan.organizer_id,
        event_id=plan.event_id,
    )
    await session.execute(
        update(Invoice).where(Invoice.id == invoice_id).values(render_job_id=job_id)
    )
    if plan.lines:
        await session.execute(insert(InvoiceLine.__table__), _line_rows(invoice_id, plan.lines))
    return Issued(invoice_id, number.full, job_id)


# The invoice's own columns the statement writes from the plan (every one, so issuing and
# canceling share one statement): all but those it computes.
_COMPUTED = {"id", "prefix", "invoice_no", "full_invoice_no", "render_job_id"}
_INVOICE_COLUMNS = [c for c in Invoice.__table__.c if c.name not in _COMPUTED]
_JOB_COLUMNS = [c for c in Job.__table__.c if c.name not in ("id", "input")]
_LINE_KEYS = ["position", *(f.name for f in fields(LineData))]


def _invoice_values(given: dict[str, Any]) -> dict[str, Any]:
    """Every written column of the invoice: the plan's value, else the column's scalar
    default, else NULL (an INSERT from a SELECT gets no Python-side defaults)."""
    row = {}
    for column in _INVOICE_COLUMNS:
        if column.name in given:
            row[column.name] = given[column.name]
            continue
        default = column.default
        scalar = default is not None and default.is_scalar  # type: ignore[attr-defined]
        row[column.name] = default.arg if scalar else None  # type: ignore[union-attr]
    return row


def _organizer_name() -> Any:
    """The issuer's name when the event sets none: the organizer's."""
    organizer = bindparam("w_organizer", type_=Integer)
    return select(Organizer.name).where(Organizer.id == organizer).scalar_subquery()


def _invoice_value(column: Any) -> Any:
    given = bindparam(f"i_{column.name}", type_=column.type)
    if column.name == "invoice_from_name":
        return func.coalesce(func.nullif(given, ""), _organizer_name(), "")
    return given


@functools.cache
def _statement(consecutive: bool, guarded: bool) -> Any:
    """The one statement (built once per number form; every value is a named parameter, so
    SQLAlchemy compiles it once and asyncpg prepares it once per connection). The lines come
    as one array per column, unnested: any number of lines, one statement."""
    ids = select(
        func.nextval(func.pg_get_serial_sequence("invoices", "id")).label("invoice_id"),
        func.nextval(func.pg_get_serial_sequence("jobs", "id")).label("job_id"),
    ).cte("ids")
    counter_row = [
        InvoiceCounter.organizer_id == bindparam("w_organizer", type_=Integer),
        InvoiceCounter.prefix == bindparam("w_counter", type_=String),
    ]
    if guarded:  # no number is taken, and so nothing written, for an invoiced order
        counter_row.append(~in_force(bindparam("w_order", type_=Integer)))
    bumped = (
        update(InvoiceCounter)
        .where(*counter_row)
        .values(last=InvoiceCounter.last + 1)
        .returning(InvoiceCounter.last)
        .cte("bumped")
    )
    source = ids.join(bumped, true())
    last = cast(bumped.c.last, Text)
    if consecutive:
        width = bindparam("w_width", type_=Integer)
        invoice_no: Any = func.lpad(last, func.greatest(width, func.length(last)), "0")
    else:
        invoice_no = bindparam("w_code", type_=String) + "-" + last
    prefix = bindparam("w_prefix", type_=String)

    job_insert = (
        insert(Job)
        .from_select(
            ["id", "input", *(c.name for c in _JOB_COLUMNS)],
            select(
                ids.c.job_id,
                func.jsonb_build_object("invoice", ids.c.invoice_id),
                *(bindparam(f"j_{c.name}", type_=c.type) for c in _JOB_COLUMNS),
            ).select_from(source),
        )
        .returning(Job.id)
        .cte("job")
    )
    invoice_insert = (
        insert(Invoice)
        .from_select(
            [
                "id",
                "prefix",
                "invoice_no",
                "full_invoice_no",
                "render_job_id",
                *(c.name for c in _INVOICE_COLUMNS),
            ],
            select(
                ids.c.invoice_id,
                prefix,
                invoice_no,
                prefix + invoice_no,
                job_insert.c.id,
                *(_invoice_value(c) for c in _INVOICE_COLUMNS),
            ).select_from(source.join(job_insert, true())),
        )
        .returning(Invoice.id)
        .cte("invoice")
    )
    table = InvoiceLine.__table__.c
    given = (
        func.unnest(*(bindparam(f"l_{k}", type_=ARRAY(table[k].type)) for k in _LINE_KEYS))
        .table_valued(*_LINE_KEYS)
        .render_derived(name="given")
    )
    lines_insert = (
        insert(InvoiceLine)
        .from_select(
            ["invoice_id", *_LINE_KEYS],
            select(
                invoice_insert.c.id, *(cast(given.c[k], table[k].type) for k in _LINE_KEYS)
            ).select_from(invoice_insert.join(given, true())),
        )
        .cte("lines")
    )
    # One row always: ``last`` is NULL when no number was taken (no counter row yet, or,
    # guarded, an invoice in force, which ``invoiced`` tells; the main query sees the
    # snapshot before the statement's own writes).
    invoiced = in_force(bindparam("w_order", type_=Integer)) if guarded else literal(False)
    return (
        select(ids.c.invoice_id, ids.c.job_id, bumped.c.last, invoiced.label("invoiced"))
        .select_from(ids.outerjoin(bumped, true()))
        .add_cte(lines_insert)
    )


async def _write_pg(session: AsyncSession, plan: Plan, guarded: bool) -> tuple[Issued | None, bool]:
    """The invoice written, or None and whether an invoice in force was the reason."""
    params: dict[str, Any] = {
        "w_order": plan.row["order_id"],
        "w_organizer": plan.organizer_id,
        "w_counter": plan.counter,
        "w_prefix": plan.prefix,
        "w_width": plan.width,
        "w_code": plan.order_code,
    }
    job = new_job_values(RENDER_KIND, organizer_id=plan.organizer_id, event_id=plan.event_id)
    params.update((f"j_{c.name}", job.get(c.name)) for c in _JOB_COLUMNS)
    params.update((f"i_{k}", v) for k, v in _invoice_values(plan.row).items())
    rows = _line_rows(None, plan.lines)
    params.update((f"l_{k}", [r[k] for r in rows]) for k in _LINE_KEYS)
    if not guarded:
        del params["w_order"]
    statement = _statement(plan.width is not None, guarded)
    (row,) = await hot_writes.fetch_with(session, statement, params)
    if row["last"] is None:
        return None, bool(row["invoiced"])
    number = plan.number(int(row["last"]))
    return Issued(int(row["invoice_id"]), number.full, int(row["job_id"])), False
