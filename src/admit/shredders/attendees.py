"""Attendee data, answers to questions (with uploaded files), and everything personal about
canceled and expired orders. Identifiers ``attendee_info`` and ``question_answers`` are the
reference's; ``canceled_orders`` is Admit's (the reference has no such shredder)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import ColumnElement, String, delete, literal, or_, select, true, update

from admit.models import (
    Answer,
    Order,
    OrderPosition,
    Question,
    QuestionOption,
    UploadedFile,
    answer_options,
)
from admit.shredders.base import (
    JsonMap,
    Part,
    Shredder,
    ShredRun,
    StoredFile,
    position_key,
    present,
    register,
    stream,
)
from admit.shredders.cache import drop_ticket_files
from admit.shredders.contact import clear_orders

UPLOAD_PREFIX = "file:"
_CHUNK = 1000
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

_ATTENDEE_COLUMNS = {
    "name": OrderPosition.attendee_name_cached,
    "name_parts": OrderPosition.attendee_name_parts,
    "email": OrderPosition.attendee_email,
    "company": OrderPosition.company,
    "street": OrderPosition.street,
    "zipcode": OrderPosition.zipcode,
    "city": OrderPosition.city,
    "country": OrderPosition.country,
    "state": OrderPosition.state,
}
_CLEARED_ATTENDEE = {
    "attendee_name_parts": {},
    "attendee_name_cached": None,
    "attendee_email": None,
    "company": None,
    "street": None,
    "zipcode": None,
    "city": None,
    "country": None,
    "state": None,
}


def _upload_of_answer() -> ColumnElement[bool]:
    """An answer's file names its upload as ``file:<uuid>`` or as ``<uuid>/<name>`` (the
    media path file fields keep)."""
    return or_(
        Answer.file == literal(UPLOAD_PREFIX, String) + UploadedFile.uuid,
        Answer.file.like(UploadedFile.uuid + literal("/%", String)),
    )


def _scope(where: ColumnElement[bool] | None) -> ColumnElement[bool]:
    return true() if where is None else where


async def attendee_pairs(
    run: ShredRun, where: ColumnElement[bool] | None = None
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """``("<code>-<positionid>", {name, email, address fields})`` of tickets with any."""
    query = (
        select(Order.code, OrderPosition.positionid, *_ATTENDEE_COLUMNS.values())
        .join(Order, Order.id == OrderPosition.order_id)
        .where(OrderPosition.event_id == run.event_id, _scope(where))
        .order_by(Order.code, OrderPosition.positionid)
    )
    async for code, positionid, *values in stream(run.session, query):
        data = dict(zip(_ATTENDEE_COLUMNS, values, strict=True))
        if any(present(v) for v in values):
            yield position_key(code, positionid), data


async def _order_chunks(
    run: ShredRun, where: ColumnElement[bool] | None
) -> AsyncIterator[ColumnElement[bool]]:
    """Conditions on ``order_id`` covering the event's orders that ``where`` selects, a
    thousand ids each: plain id lists keep the plan of the updates below simple whatever the
    table statistics say (a semi-join misjudged on a freshly filled table took 100 times
    longer). Without ``where``: one condition, every order of the event."""
    if where is None:
        yield true()
        return
    ids = list(
        await run.session.scalars(
            select(Order.id).where(Order.event_id == run.event_id, where).order_by(Order.id)
        )
    )
    for start in range(0, len(ids), _CHUNK):
        yield OrderPosition.order_id.in_(ids[start : start + _CHUNK])


async def clear_attendees(run: ShredRun, where: ColumnElement[bool] | None = None) -> None:
    async for orders in _order_chunks(run, where):
        await run.session.execute(
            update(OrderPosition)
            .where(OrderPosition.event_id == run.event_id, orders)
            .values(**_CLEARED_ATTENDEE)
            .execution_options(synchronize_session=False)
        )


def _answers_query(run: ShredRun, where: ColumnElement[bool] | None) -> Any:
    return (
        select(
            Answer.id,
            Order.code,
            OrderPosition.positionid,
            Question.id,
            Question.identifier,
            Answer.answer,
            Answer.file,
            UploadedFile.key,
            UploadedFile.filename,
            QuestionOption.id,
            QuestionOption.identifier,
        )
        .select_from(Answer)
        .join(OrderPosition, OrderPosition.id == Answer.orderposition_id)
        .join(Order, Order.id == OrderPosition.order_id)
        .join(Question, Question.id == Answer.question_id)
        .outerjoin(UploadedFile, _upload_of_answer())
        .outerjoin(answer_options, answer_options.c.answer_id == Answer.id)
        .outerjoin(QuestionOption, QuestionOption.id == answer_options.c.option_id)
        .where(OrderPosition.event_id == run.event_id, _scope(where))
        .order_by(
            Order.code, OrderPosition.positionid, Answer.question_id, Answer.id, QuestionOption.id
        )
    )


def _file_location(value: str, key: str | None, filename: str | None) -> tuple[str, str]:
    """Where an answer's file lies in the store, and its name: its upload's, or, for a value
    naming no upload, the value itself as a store key."""
    if key is not None:
        return key, filename or "file"
    return value, value.rsplit("/", 1)[-1] or "file"


async def answer_pairs(
    run: ShredRun, where: ColumnElement[bool] | None, files: list[StoredFile]
) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """``("<code>-<positionid>", [answers])``; the answers' files are added to ``files``
    (exported after the document, each under ``files/<code>-<positionid>-<question>-<name>``)."""
    current: str | None = None
    answers: list[dict[str, Any]] = []
    last_answer: int | None = None
    async for row in stream(run.session, _answers_query(run, where)):
        (answer_id, code, positionid, qid, qident, text, file, key, filename, oid, oident) = row
        pos = position_key(code, positionid)
        if pos != current:
            if current is not None:
                yield current, answers
            current, answers, last_answer = pos, [], None
        if answer_id != last_answer:
            last_answer = answer_id
            entry: dict[str, Any] = {
                "question": qid,
                "question_identifier": qident,
                "answer": text,
                "options": [],
                "option_identifiers": [],
            }
            if file:
                location, name = _file_location(file, key, filename)
                exported = f"files/{_UNSAFE.sub('_', f'{pos}-{qident}-{name}')}"
                entry["file"] = exported
                files.append(StoredFile(exported, location))
            answers.append(entry)
        if oid is not None:
            answers[-1]["options"].append(oid)
            answers[-1]["option_identifiers"].append(oident)
    if current is not None:
        yield current, answers


async def answer_parts(run: ShredRun, where: ColumnElement[bool] | None) -> AsyncIterator[Part]:
    files: list[StoredFile] = []
    yield JsonMap("answers.json", answer_pairs(run, where, files))
    for file in files:  # complete once the document above was written
        yield file


async def delete_answers(run: ShredRun, where: ColumnElement[bool] | None = None) -> None:
    """Deletes the answers (their options go with them) and the uploads of file answers;
    the files themselves are deleted right before the commit."""
    async for orders in _order_chunks(run, where):
        positions = select(OrderPosition.id).where(OrderPosition.event_id == run.event_id, orders)
        files = await run.session.execute(
            select(Answer.file, UploadedFile.id, UploadedFile.key)
            .outerjoin(UploadedFile, _upload_of_answer())
            .where(Answer.orderposition_id.in_(positions), Answer.file.is_not(None))
        )
        uploads = []
        for value, upload_id, key in files:
            if value:
                run.delete_keys.append(_file_location(value, key, None)[0])
            if upload_id is not None:
                uploads.append(upload_id)
        if uploads:
            await run.session.execute(delete(UploadedFile).where(UploadedFile.id.in_(uploads)))
        await run.session.execute(
            delete(Answer)
            .where(Answer.orderposition_id.in_(positions))
            .execution_options(synchronize_session=False)
        )


@register
class AttendeeInfoShredder(Shredder):
    """Attendee names, e-mail addresses and postal addresses of every ticket."""

    identifier = "attendee_info"
    verbose_name = "Attendee data"

    async def parts(self, run: ShredRun) -> AsyncIterator[Part]:
        yield JsonMap("attendees.json", attendee_pairs(run))

    async def shred(self, run: ShredRun) -> None:
        await clear_attendees(run)
        await drop_ticket_files(run)


@register
class QuestionAnswerShredder(Shredder):
    """Every answer to a question, with the files of file answers."""

    identifier = "question_answers"
    verbose_name = "Answers to questions"

    def parts(self, run: ShredRun) -> AsyncIterator[Part]:
        return answer_parts(run, None)

    async def shred(self, run: ShredRun) -> None:
        await delete_answers(run)
        await drop_ticket_files(run)


CANCELED = Order.status.in_(("c", "e"))


@register
class CanceledOrderShredder(Shredder):
    """Canceled and expired orders: contact data, invoice address and internal comment of the
    order, attendee data and answers of its tickets. Their codes, dates, products, prices and
    fees stay (a cancellation fee is revenue)."""

    identifier = "canceled_orders"
    verbose_name = "Personal data of canceled and expired orders"

    async def parts(self, run: ShredRun) -> AsyncIterator[Part]:
        yield JsonMap("orders.json", self._orders(run))
        yield JsonMap("attendees.json", attendee_pairs(run, CANCELED))
        async for part in answer_parts(run, CANCELED):
            yield part

    async def _orders(self, run: ShredRun) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        query = (
            select(
                Order.code,
                Order.status,
                Order.email,
                Order.phone,
                Order.invoice_address,
                Order.comment,
            )
            .where(Order.event_id == run.event_id, CANCELED)
            .order_by(Order.code)
        )
        async for code, status, email, phone, address, comment in stream(run.session, query):
            if any(present(v) for v in (email, phone, address, comment)):
                yield (
                    code,
                    {
                        "status": status,
                        "email": email,
                        "phone": phone,
                        "invoice_address": address,
                        "comment": comment,
                    },
                )

    async def shred(self, run: ShredRun) -> None:
        await clear_orders(run, CANCELED, email=None, phone=None, invoice_address=None, comment="")
        await clear_attendees(run, CANCELED)
        await delete_answers(run, CANCELED)
        await drop_ticket_files(run)
