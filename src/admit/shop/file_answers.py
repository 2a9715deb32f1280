"""Answers to file questions (type ``F``) in the shop: the buyer's file, checked as the upload
API checks one, kept between a refused checkout and the next, and attached to the order.

A file the form sends is checked (PDF, PNG, JPEG or GIF: the declared type, the name's
extension and the content as :mod:`admit.uploads.sniff` reads it; at most
:data:`admit.uploads.service.MAX_UPLOAD_BYTES`) and stored as an ``UploadedFile`` of the event's
shop (``owner_kind`` :data:`OWNER`, ``owner_id`` the event), not yet used, so it expires like an
unused API upload. It is committed before the order is tried: a refused checkout keeps it, and
the form carries its ``file:<uuid>`` id in a hidden field so the buyer need not send it again.

The order's answer is stored as an answer of the API's file fields reads: ``file`` holds the
media path ``<uuid>/<name>`` (what the shredders export and delete), ``answer`` the file's
absolute media URL; the upload is marked used. The order page links the file under the order's
secret URL.

The headless checkout takes files the same way in two steps: ``POST …/upload/`` (the raw body,
as ``POST /api/v1/upload`` takes it; only for an event that asks a file question) answers
``{"id": "file:<uuid>"}``, and the checkout's answer to the file question is that id.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import uuid as uuids
from dataclasses import dataclass
from typing import IO, Any

from fastapi import Request
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.questions.answers import AnswerIn
from admit.db import utcnow
from admit.jobs.storage import CHUNK_SIZE, FileStore
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.resources.i18n import localized
from admit.models import Answer, Event, Order, Question, UploadedFile
from admit.shop.multipart import Incoming
from admit.uploads.service import (
    ALLOWED_TYPES,
    LIFETIME,
    MAX_UPLOAD_BYTES,
    content_type_of,
    filename_of,
    media_path,
    media_url,
    upload_by_path,
    uuid_of,
)
from admit.uploads.sniff import NotThatType, PoolBusy, inspect

OWNER = "shop"
# The event's unused shop uploads may hold this many times a credential's upload quota.
QUOTA_FACTOR = 10
TYPES_TEXT = "PDF, PNG, JPEG or GIF"
_BY_EXTENSION = {ext: kind for kind, exts in ALLOWED_TYPES.items() for ext in exts}
ACCEPT = ",".join([*_BY_EXTENSION, *ALLOWED_TYPES])


TOO_LARGE = f"The file is too large: at most {MAX_UPLOAD_BYTES:,} bytes (10 MB)."
UNKNOWN_FILE = (
    "Upload the file with POST …/upload/ and send its id (file:<id>) as the answer; this id "
    "names no such file, or it expired."
)


TAKEN = "A file was used by another order meanwhile: please upload it again."


class FileRefused(ValueError):
    """The buyer's file cannot be taken; the message is the sentence next to the field."""


def _content_type(incoming: Incoming) -> str:
    name = incoming.filename.lower()
    by_name = next((kind for ext, kind in _BY_EXTENSION.items() if name.endswith(ext)), None)
    if by_name is None:
        raise FileRefused(f"The file must be a {TYPES_TEXT} file.")
    declared = incoming.content_type
    if declared in ALLOWED_TYPES and declared != by_name:
        raise FileRefused("The file's name does not fit its type.")
    return by_name


async def held_bytes(session: AsyncSession, event: Event) -> int:
    """Bytes of the event's shop uploads that no order has taken yet."""
    total = await session.scalar(
        select(func.coalesce(func.sum(UploadedFile.size), 0)).where(
            UploadedFile.owner_kind == OWNER,
            UploadedFile.owner_id == event.id,
            UploadedFile.expires.is_not(None),
        )
    )
    return int(total or 0)


async def store_incoming(
    session: AsyncSession, store: FileStore, event: Event, incoming: Incoming, quota: int
) -> UploadedFile:
    """The form's file, checked and stored as an unused upload of the event's shop; raises
    :class:`FileRefused` with the reason. The event's unused shop uploads are bounded by
    ``quota`` bytes (a flood of files that never become orders cannot fill the disk)."""
    limit_mb = 10
    if incoming.too_large:
        raise FileRefused(f"The file is too large: at most {limit_mb} MB.")
    if incoming.spool is None or incoming.size == 0:
        raise FileRefused("The file is empty.")
    kind = _content_type(incoming)
    if await held_bytes(session, event) + incoming.size > quota:
        raise FileRefused("The shop cannot take more files right now; please try again later.")
    try:
        await inspect(incoming.spool.name, kind)
    except NotThatType as exc:
        raise FileRefused(str(exc)) from None
    except PoolBusy:
        raise FileRefused("Too many files are being checked; please try again.") from None
    handle = uuids.uuid4().hex
    key = f"uploads/{handle[:2]}/{handle}"
    incoming.spool.seek(0)
    async with store.writer(key) as out:
        await asyncio.to_thread(shutil.copyfileobj, incoming.spool, out, CHUNK_SIZE)
    upload = UploadedFile(
        uuid=handle,
        owner_kind=OWNER,
        owner_id=event.id,
        filename=incoming.filename[:255],
        content_type=kind,
        size=incoming.size,
        key=key,
        created=utcnow(),
        expires=utcnow() + LIFETIME,
    )
    session.add(upload)
    await session.flush()
    return upload


async def kept_upload(session: AsyncSession, event: Event, value: str) -> UploadedFile | None:
    """The unused shop upload a refused form kept (its ``file:<uuid>``), else None."""
    handle = uuid_of(value.strip()) if value else None
    if handle is None:
        return None
    found = (
        await session.execute(
            select(UploadedFile).where(
                UploadedFile.uuid == handle,
                UploadedFile.owner_kind == OWNER,
                UploadedFile.owner_id == event.id,
            )
        )
    ).scalar_one_or_none()
    if found is None or found.expires is None or found.expires <= utcnow():
        return None
    return found


@dataclass
class FileAnswer:
    question_id: int
    upload: UploadedFile


async def attach(
    session: AsyncSession, base_url: str, position_id: int, answers: list[FileAnswer]
) -> None:
    """The file answers of a new order position; their uploads no longer expire. Each upload
    is taken with a conditional update, so two orders never share one (the second is refused,
    and its transaction rolled back by the caller)."""
    for answer in answers:
        claimed = await session.execute(
            update(UploadedFile)
            .where(UploadedFile.id == answer.upload.id, UploadedFile.expires.is_not(None))
            .values(expires=None)
            .returning(UploadedFile.id)
            .execution_options(synchronize_session=False)
        )
        if claimed.first() is None:
            raise FieldErrors.general(TAKEN)
        answer.upload.expires = None
        path = media_path(answer.upload)
        session.add(
            Answer(
                orderposition_id=position_id,
                question_id=answer.question_id,
                answer=media_url(base_url, path) or "",
                file=path,
            )
        )


async def order_files(session: AsyncSession, order: Order) -> dict[int, list[dict[str, Any]]]:
    """The file answers of each position (by id), as the order page links them: the
    answer's id, the question and the file's name."""
    answers = [(p.id, a) for p in order.positions for a in p.answers if a.file]
    if not answers:
        return {}
    ids = {a.question_id for _, a in answers}
    rows = await session.execute(select(Question.id, Question.question).where(Question.id.in_(ids)))
    texts = {question_id: text for question_id, text in rows}
    found: dict[int, list[dict[str, Any]]] = {}
    for position_id, a in answers:
        found.setdefault(position_id, []).append(
            {
                "id": a.id,
                "question": localized(texts.get(a.question_id), order.locale or "en"),
                "name": a.file.split("/", 1)[-1],
            }
        )
    return found


async def answer_upload(session: AsyncSession, order: Order, answer_id: int) -> UploadedFile | None:
    """The file of one of the order's answers (the order loaded with its answers)."""
    for position in order.positions:
        for a in position.answers:
            if a.id == answer_id and a.file:
                return await upload_by_path(session, a.file)
    return None


# -- the headless checkout API: POST …/upload/, then ``file:<id>`` as the answer ---------------


async def file_questions(session: AsyncSession, event: Event) -> set[int]:
    """The ids of the event's file questions."""
    rows = await session.scalars(
        select(Question.id).where(Question.event_id == event.id, Question.type == "F")
    )
    return set(rows)


async def _spool(request: Request, handle: IO[bytes]) -> int:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_UPLOAD_BYTES:
        raise APIError(413, TOO_LARGE)
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_UPLOAD_BYTES:
            raise APIError(413, TOO_LARGE)
        await asyncio.to_thread(handle.write, chunk)
    return size


async def receive(
    request: Request, session: AsyncSession, store: FileStore, event: Event, quota: int
) -> UploadedFile:
    """The body as a file for a file question of ``event`` (raw, with its ``Content-Type``
    and ``Content-Disposition: attachment; filename=...``, as ``POST /api/v1/upload``
    takes it); 400 naming why not, 413 past the size."""
    content_type = content_type_of(request.headers.get("content-type"))
    filename = filename_of(request.headers.get("content-disposition"), content_type)
    if not await file_questions(session, event):
        raise FieldErrors.general("This event asks no file questions.")
    await session.rollback()  # no connection held while the body arrives
    with tempfile.NamedTemporaryFile(prefix="admit-shop-") as spool:
        size = await _spool(request, spool)
        await asyncio.to_thread(spool.flush)
        await session.refresh(event)  # expired by the rollback
        incoming = Incoming("", filename, content_type, spool, size)  # type: ignore[arg-type]
        try:
            return await store_incoming(session, store, event, incoming, quota)
        except FileRefused as exc:
            raise FieldErrors.general(str(exc)) from None


async def split_answers(
    session: AsyncSession, event: Event, positions: list[list[AnswerIn]]
) -> tuple[list[list[AnswerIn]], list[list[FileAnswer]]]:
    """Each position's answers without those to file questions, and those as files (their
    ``answer`` a ``file:<id>`` from :func:`receive`); 400 naming each unusable one."""
    asked = await file_questions(session, event) if any(positions) else set()
    rest: list[list[AnswerIn]] = []
    files: list[list[FileAnswer]] = []
    errors: list[dict[str, list[str]]] = []
    for answers in positions:
        mine: list[FileAnswer] = []
        problems: list[str] = []
        for answer in answers:
            if answer.question not in asked:
                continue
            upload = await kept_upload(session, event, answer.answer or "")
            if upload is None:
                problems.append(UNKNOWN_FILE)
            else:
                mine.append(FileAnswer(answer.question, upload))
        rest.append([a for a in answers if a.question not in asked])
        files.append(mine)
        errors.append({"answers": problems} if problems else {})
    if any(errors):
        raise FieldErrors({"positions": errors})
    return rest, files
