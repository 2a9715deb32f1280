"""Writing an invoice in as few statements as it takes: numbers, rows, lines and its job.

Issuing runs inside the transaction that makes an order paid, so every round trip counts
(issue 33 allows the invoice 10 % of a payment's throughput). On PostgreSQL one statement does
it all, with data-modifying CTEs: the ids of the invoice and of its rendering job are drawn
from their sequences, the counter row is incremented (``UPDATE … RETURNING``, which holds the
row's lock until the commit), and the job, the invoice (with its number and job) and all its
lines are inserted from those values. The counter's lock is therefore taken by the statement
that writes the invoice and held only until the commit follows it. Every insert selects from
the counter's result, so when the counter row does not exist yet nothing is written: the row
is inserted (``ON CONFLICT DO NOTHING``) and the statement runs again.

SQLite (tests, small installations) serialises writers anyway and gets the plain sequence:
the number, the invoice, its job, the job's id on the invoice, the lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    String,
    Text,
    cast,
    func,
    insert,
    literal,
    select,
    true,
    update,
    values,
)
from sqlalchemy import column as sql_column
from sqlalchemy.ext.asyncio import AsyncSession

from admit.invoices import content, numbers
from admit.invoices.content import LineData
from admit.jobs.queue import enqueue, kick_after_commit, new_job_values
from admit.models import Invoice, InvoiceCounter, InvoiceLine, Job

RENDER_KIND = "invoices.render"


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
    if session.get_bind().dialect.name == "postgresql":
        issued = await _write_pg(session, plan)
        if issued is None:  # the first number of this counter: create its row, then again
            await numbers.create_counter(session, plan.organizer_id, plan.counter)
            issued = await _write_pg(session, plan)
        if issued is None:
            raise RuntimeError("invoice counter row missing after creating it")
        kick_after_commit(session, issued.render_job_id)
        return issued
    return await _write_plain(session, plan)


def _line_rows(invoice_id: Any, lines: Sequence[LineData]) -> list[dict[str, Any]]:
    return [
        {"invoice_id": invoice_id, "position": index, **content.line_values(line)}
        for index, line in enumerate(lines, start=1)
    ]


async def _write_plain(session: AsyncSession, plan: Plan) -> Issued:
    value = await numbers.take(session, plan.organizer_id, plan.counter)
    number = plan.number(value)
    row = {**plan.row, "prefix": number.prefix, "invoice_no": number.invoice_no,
           "full_invoice_no": number.full}  # fmt: skip
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


def _with_defaults(given: dict[str, Any]) -> dict[str, Any]:
    """The row with the columns' scalar defaults filled in (an INSERT from a SELECT gets no
    Python-side defaults)."""
    row = dict(given)
    for column in Invoice.__table__.c:
        default = column.default
        if column.name not in row and column.name != "id" and default is not None:
            if default.is_scalar:  # type: ignore[attr-defined]
                row[column.name] = default.arg  # type: ignore[attr-defined]
    return row


def _typed(value: Any, column: Any) -> Any:
    return literal(value, column.type)


async def _write_pg(session: AsyncSession, plan: Plan) -> Issued | None:
    ids = select(
        func.nextval(func.pg_get_serial_sequence("invoices", "id")).label("invoice_id"),
        func.nextval(func.pg_get_serial_sequence("jobs", "id")).label("job_id"),
    ).cte("ids")
    bumped = (
        update(InvoiceCounter)
        .where(
            InvoiceCounter.organizer_id == plan.organizer_id,
            InvoiceCounter.prefix == plan.counter,
        )
        .values(last=InvoiceCounter.last + 1)
        .returning(InvoiceCounter.last)
        .cte("bumped")
    )
    source = ids.join(bumped, true())
    last = cast(bumped.c.last, Text)
    if plan.width is None:
        invoice_no: Any = literal(f"{plan.order_code}-", String) + last
    else:
        invoice_no = func.lpad(last, func.greatest(plan.width, func.length(last)), "0")

    job = new_job_values(RENDER_KIND, organizer_id=plan.organizer_id, event_id=plan.event_id)
    job.pop("input")
    job_columns = ["id", "input", *job]
    job_insert = (
        insert(Job)
        .from_select(
            job_columns,
            select(
                ids.c.job_id,
                func.jsonb_build_object("invoice", ids.c.invoice_id),
                *(_typed(v, Job.__table__.c[k]) for k, v in job.items()),
            ).select_from(source),
        )
        .returning(Job.id)
        .cte("job")
    )

    row = _with_defaults(plan.row)
    invoice_columns = ["id", "prefix", "invoice_no", "full_invoice_no", "render_job_id", *row]
    invoice_insert = (
        insert(Invoice)
        .from_select(
            invoice_columns,
            select(
                ids.c.invoice_id,
                literal(plan.prefix, String),
                invoice_no,
                literal(plan.prefix, String) + invoice_no,
                job_insert.c.id,
                *(_typed(v, Invoice.__table__.c[k]) for k, v in row.items()),
            ).select_from(source.join(job_insert, true())),
        )
        .returning(Invoice.id)
        .cte("invoice")
    )

    line_rows = _line_rows(None, plan.lines)
    keys = [k for k in line_rows[0] if k != "invoice_id"] if line_rows else []
    statement = select(ids.c.invoice_id, ids.c.job_id, bumped.c.last).select_from(source)
    if line_rows:
        table = InvoiceLine.__table__.c
        given = values(*(sql_column(k, table[k].type) for k in keys), name="given").data(
            [tuple(r[k] for k in keys) for r in line_rows]
        )
        lines_insert = (
            insert(InvoiceLine)
            .from_select(
                ["invoice_id", *keys],
                select(
                    invoice_insert.c.id, *(cast(given.c[k], table[k].type) for k in keys)
                ).select_from(invoice_insert.join(given, true())),
            )
            .cte("lines")
        )
        statement = statement.add_cte(lines_insert)
    else:
        statement = statement.add_cte(invoice_insert)
    found = (await session.execute(statement)).one_or_none()
    if found is None:
        return None
    number = plan.number(int(found.last))
    return Issued(int(found.invoice_id), number.full, int(found.job_id))
