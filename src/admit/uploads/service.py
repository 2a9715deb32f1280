"""Receiving uploads, handing them to file fields, serving used ones, purging unused ones.

``POST /api/v1/upload`` takes the file as the raw body, as the reference does: its type from
``Content-Type`` (PDF, PNG, JPEG, GIF; anything else is 400), its name from
``Content-Disposition: attachment; filename=...`` (required; the extension must fit the type).
The body streams into a temporary file with a size cap (413 past it, refused up front when the
declared length is larger), the content is checked to be what the type says (see
:mod:`admit.uploads.sniff`), and the file goes to the file store. The answer is
``{"id": "file:<uuid>"}``.

An upload belongs to the credential that sent it (``jobs.downloads.owner_of``) and expires after
:data:`LIFETIME` unless a file field takes it with :func:`claim_upload`, which clears the
expiry. The periodic :func:`purge_expired` deletes expired rows and, after the commit, their
stored files. A used upload is public at ``/api/v1/media/<uuid>/<name>``: the uuid is random
(122 bits), so the URL is a capability, like the reference's public media URLs.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import re
import shutil
import tempfile
import unicodedata
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Collection
from email.message import Message
from typing import TYPE_CHECKING, BinaryIO

from fastapi import Request
from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import utcnow
from admit.jobs.downloads import owner_of
from admit.jobs.scheduler import PeriodicTask, periodic
from admit.jobs.storage import CHUNK_SIZE, FileStore
from admit.kit.http.context import Principal
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.http.routing import API_PREFIX
from admit.kit.http.transaction import after_commit
from admit.models import UploadedFile
from admit.uploads.sniff import NotThatType, PageSizes, PoolBusy, inspect

if TYPE_CHECKING:
    from admit.config import Settings


MAX_UPLOAD_BYTES = 10 * 1024 * 1024
LIFETIME = dt.timedelta(hours=24)
# Content types and the file name extensions that go with them (the reference's list).
ALLOWED_TYPES: dict[str, tuple[str, ...]] = {
    "application/pdf": (".pdf",),
    "image/png": (".png",),
    "image/jpeg": (".jpg", ".jpeg"),
    "image/gif": (".gif",),
}
PDF_TYPES = frozenset({"application/pdf"})
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif"})
MEDIA_PREFIX = f"{API_PREFIX}/media"
PURGE_BATCH = 500

_FILE_ID = re.compile(
    r"^file:([0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12})$"
)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_WRITE_BUFFER = 1024 * 1024


class InvalidUpload(ValueError):
    """A file field's value names no usable upload; the message is for that field."""


# -- names and URLs ---------------------------------------------------------------------------


def content_type_of(header: str | None) -> str:
    """The declared type without parameters; 400 unless it is one of :data:`ALLOWED_TYPES`."""
    kind = (header or "").split(";")[0].strip().lower()
    if kind not in ALLOWED_TYPES:
        allowed = ", ".join(ALLOWED_TYPES)
        shown = kind or "(none)"
        raise FieldErrors.general(f'Content type "{shown}" is not allowed; use one of {allowed}.')
    return kind


def filename_of(header: str | None, content_type: str) -> str:
    """The file name from ``Content-Disposition`` (``filename=`` or RFC 2231 ``filename*=``),
    reduced to its last path component; 400 when missing or not fitting the type."""
    name = None
    if header:
        message = Message()
        message["content-disposition"] = header
        try:
            name = message.get_filename()
        except (ValueError, LookupError, UnicodeError):
            name = None
    if name:
        try:  # HTTP headers arrive as Latin-1; clients often send a UTF-8 name raw
            name = name.encode("latin-1").decode("utf-8")
        except UnicodeError:
            pass
        name = re.split(r"[/\\]", name)[-1]
        name = "".join(c for c in name if c.isprintable()).strip()
    if not name:
        raise FieldErrors.general(
            "Missing filename. Send a Content-Disposition header such as "
            "'attachment; filename=\"ticket.pdf\"'."
        )
    extensions = ALLOWED_TYPES[content_type]
    if not name.lower().endswith(extensions):
        raise FieldErrors.general(
            f'File name "{name[:100]}" has an invalid extension for type "{content_type}".'
        )
    if len(name) > 255:
        suffix = name[name.rfind(".") :]
        name = name[: 255 - len(suffix)] + suffix
    return name


def url_name(filename: str) -> str:
    """The file name as it appears in the media URL: ASCII letters, digits, ``._-`` only."""
    ascii_name = unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode()
    safe = _UNSAFE.sub("_", ascii_name).lstrip("._") or "file"
    if len(safe) > 100:
        dot = safe.rfind(".")
        suffix = safe[dot:] if dot > 0 and len(safe) - dot <= 10 else ""
        safe = safe[: 100 - len(suffix)] + suffix
    return safe


def media_path(upload: UploadedFile) -> str:
    """``<uuid>/<name>``: what an item's ``picture`` stores, and the media URL's tail."""
    return f"{upload.uuid}/{url_name(upload.filename)}"


def media_url(base_url: str, path: str | None) -> str | None:
    """The absolute public URL of a used upload's :func:`media_path` (None stays None)."""
    if not path:
        return None
    return f"{base_url}{MEDIA_PREFIX}/{path}"


def uuid_of(value: str) -> str | None:
    """The uuid (32 hex digits) of a ``file:<uuid>`` id, or None when it is not one."""
    found = _FILE_ID.match(value)
    return found.group(1).replace("-", "").lower() if found else None


# -- receiving --------------------------------------------------------------------------------


def _too_large() -> APIError:
    megabytes = MAX_UPLOAD_BYTES / (1024 * 1024)
    return APIError(
        413, f"The file is too large: at most {MAX_UPLOAD_BYTES:,} bytes ({megabytes:.3g} MB)."
    )


async def _spool(request: Request, handle: BinaryIO) -> int:
    """Streams the request body into ``handle``; 413 as soon as it passes the cap."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_UPLOAD_BYTES:
        raise _too_large()
    size = 0
    pending = bytearray()
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_UPLOAD_BYTES:
            raise _too_large()
        pending += chunk
        if len(pending) >= _WRITE_BUFFER:
            await asyncio.to_thread(handle.write, bytes(pending))
            pending.clear()
    if pending:
        await asyncio.to_thread(handle.write, bytes(pending))
    return size


# Permissions of the fields that take an upload (a layout's background, an item's picture):
# a caller holding none of them could never use a file, so it may not store one.
UPLOAD_PERMISSIONS = ("event.settings.general:write", "event.items:write")


def may_upload(principal: Principal) -> bool:
    return principal.may_write() and any(
        grant.has_event_permission(permission)
        for grant in principal.grants
        for permission in UPLOAD_PERMISSIONS
    )


async def held_bytes(session: AsyncSession, principal: Principal) -> int:
    """Bytes of the credential's uploads that no field has taken yet."""
    kind, owner_id = owner_of(principal)
    total = await session.scalar(
        select(func.coalesce(func.sum(UploadedFile.size), 0)).where(
            UploadedFile.owner_kind == kind,
            UploadedFile.owner_id == owner_id,
            UploadedFile.expires.is_not(None),
        )
    )
    return int(total or 0)


def _over_quota(quota: int) -> FieldErrors:
    return FieldErrors.general(
        f"Upload quota exceeded: this credential may hold {quota:,} bytes of files no field "
        "uses yet (unused uploads are deleted after 24 hours)."
    )


async def receive_upload(
    request: Request, session: AsyncSession, principal: Principal, store: FileStore
) -> UploadedFile:
    """The request's body as a new upload of ``principal`` (checked, stored, not yet used);
    400 past the credential's quota of unused uploads (``ADMIT_UPLOAD_QUOTA_BYTES``). The
    route lets only callers :func:`may_upload` come here."""
    content_type = content_type_of(request.headers.get("content-type"))
    filename = filename_of(request.headers.get("content-disposition"), content_type)
    quota: int = request.app.state.settings.upload_quota_bytes
    if await held_bytes(session, principal) >= quota:
        raise _over_quota(quota)
    # Nothing of the database is needed while the body arrives: a slow client must not hold
    # a connection (or, on SQLite, the write lock) for that long.
    await session.rollback()
    with tempfile.NamedTemporaryFile(prefix="admit-upload-") as spool:
        size = await _spool(request, spool)
        if size == 0:
            raise FieldErrors.general("The submitted file is empty.")
        await asyncio.to_thread(spool.flush)
        try:
            pages = await inspect(spool.name, content_type)
        except NotThatType as exc:
            raise FieldErrors.general(str(exc)) from None
        except PoolBusy:
            raise APIError(503, "Too many files are being checked; try again shortly.") from None
        handle = uuid.uuid4().hex
        if pages is not None:
            _remember_pages(handle, pages)
        key = f"uploads/{handle[:2]}/{handle}"
        spool.seek(0)
        async with store.writer(key) as out:
            await asyncio.to_thread(shutil.copyfileobj, spool, out, CHUNK_SIZE)
    kind, owner_id = owner_of(principal)
    upload = UploadedFile(
        uuid=handle,
        owner_kind=kind,
        owner_id=owner_id,
        filename=filename,
        content_type=content_type,
        size=size,
        key=key,
        created=utcnow(),
        expires=utcnow() + LIFETIME,
    )
    session.add(upload)
    try:
        await session.flush()
        if await held_bytes(session, principal) > quota:
            raise _over_quota(quota)
    except BaseException:
        await store.delete(key)
        raise
    return upload


# -- using ------------------------------------------------------------------------------------


async def claim_upload(
    session: AsyncSession, principal: Principal, value: object, allowed_types: Collection[str]
) -> UploadedFile:
    """The caller's own upload named by ``value`` (``file:<uuid>``), checked to be one of
    ``allowed_types`` and marked used (it no longer expires). Raises :class:`InvalidUpload`
    with a message for the field; another caller's upload is as unknown as a missing one."""
    handle = uuid_of(value) if isinstance(value, str) else None
    if handle is None:
        raise InvalidUpload(
            "Expected a file id of the form file:<id> as POST /api/v1/upload answers it."
        )
    upload = (
        await session.execute(select(UploadedFile).where(UploadedFile.uuid == handle))
    ).scalar_one_or_none()
    if upload is None or (upload.owner_kind, upload.owner_id) != owner_of(principal):
        raise InvalidUpload(f'The file "{value}" does not exist or was uploaded by someone else.')
    if upload.expires is not None and upload.expires <= utcnow():
        raise InvalidUpload(f'The file "{value}" has expired; upload it again.')
    if upload.content_type not in allowed_types:
        wanted = ", ".join(sorted(allowed_types))
        raise InvalidUpload(f'The file must be of type {wanted}, not "{upload.content_type}".')
    upload.expires = None
    return upload


async def upload_by_path(session: AsyncSession, path: str | None) -> UploadedFile | None:
    """The used upload behind a stored :func:`media_path` (an item's ``picture``)."""
    if not path:
        return None
    handle = path.split("/", 1)[0]
    if not re.fullmatch(r"[0-9a-f]{32}", handle):
        return None
    query = select(UploadedFile).where(UploadedFile.uuid == handle)
    return (await session.execute(query)).scalar_one_or_none()


def open_upload(store: FileStore, upload: UploadedFile) -> AsyncIterator[bytes]:
    """The stored content in chunks (raises ``StoredFileMissing`` before the first)."""
    return store.open(upload.key)


async def read_upload(store: FileStore, upload: UploadedFile) -> bytes:
    """The whole content (uploads are at most :data:`MAX_UPLOAD_BYTES`), e.g. for an image."""
    data = bytearray()
    async for chunk in store.open(upload.key):
        data += chunk
    return bytes(data)


# Page sizes of PDF uploads by uuid (the content behind a uuid never changes), so layout writes
# do not read the background again in this process.
_PAGES: OrderedDict[str, PageSizes] = OrderedDict()
_PAGES_KEPT = 512


def _remember_pages(handle: str, pages: PageSizes) -> None:
    _PAGES[handle] = pages
    _PAGES.move_to_end(handle)
    while len(_PAGES) > _PAGES_KEPT:
        _PAGES.popitem(last=False)


async def upload_page_sizes(store: FileStore, upload: UploadedFile) -> PageSizes:
    """Width and height in mm of each page of a PDF upload (a layout's background). Raises
    ``StoredFileMissing``, or :class:`NotThatType` when the file cannot be read."""
    known = _PAGES.get(upload.uuid)
    if known is not None:
        return known
    with tempfile.NamedTemporaryFile(prefix="admit-upload-") as spool:
        async for chunk in store.open(upload.key):
            await asyncio.to_thread(spool.write, chunk)
        await asyncio.to_thread(spool.flush)
        pages = await inspect(spool.name, upload.content_type)
    if pages is None:
        raise NotThatType("The file is not a PDF document.")
    _remember_pages(upload.uuid, pages)
    return pages


# -- housekeeping -----------------------------------------------------------------------------


async def purge_expired(session: AsyncSession, now: dt.datetime, *, store: FileStore) -> int:
    """Deletes uploads that expired unused; their stored files go after the commit. The
    delete re-checks the expiry, so an upload claimed meanwhile stays."""
    keys: list[str] = []
    while True:
        batch = (
            select(UploadedFile.id)
            .where(UploadedFile.expires < now)
            .order_by(UploadedFile.id)
            .limit(PURGE_BATCH)
        )
        gone = (
            await session.execute(
                delete(UploadedFile)
                .where(UploadedFile.id.in_(batch), UploadedFile.expires < now)
                .returning(UploadedFile.key),
                execution_options={"synchronize_session": False},
            )
        ).scalars()
        found = list(gone)
        keys += found
        if len(found) < PURGE_BATCH or len(keys) >= 20 * PURGE_BATCH:
            break

    async def delete_files() -> None:
        for key in keys:
            await store.delete(key)

    if keys:
        after_commit(session, delete_files)
    return len(keys)


@periodic
def _periodic_tasks(settings: Settings, store: FileStore) -> list[PeriodicTask]:
    return [PeriodicTask("uploads.purge", 3600, functools.partial(purge_expired, store=store))]
