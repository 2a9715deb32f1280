"""The export's ZIP: one folder per shredder, and a manifest that lets the shred check it.

Each shredder's parts are rendered to bytes the same way twice: once into the ZIP when the
export runs, and once more (into a hash only) when the shred starts. The manifest records, per
shredder, the SHA-256 of what was exported and how many records it held; the shred refuses a
shredder whose data now hashes differently (the data changed after the export, so the file the
organizer keeps would miss what is about to be removed), unless nothing is left to remove.

Everything streams: rows come in chunks, JSON is written a record a line, stored files are
copied chunk by chunk, and the ZIP is read back from a temporary file, never from memory.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import tempfile
import zipfile
from collections.abc import AsyncIterator, Sequence
from decimal import Decimal
from typing import IO, Any, BinaryIO

import orjson

from admit.jobs.storage import FileStore, StoredFileMissing
from admit.shredders.base import JsonList, JsonMap, Part, Shredder, ShredRun, StoredFile

MANIFEST = "manifest.json"
FORMAT = 1
_BUFFER = 64 * 1024


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"not serialisable in an export: {type(value).__name__}")


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=_default, option=orjson.OPT_NON_STR_KEYS)


class Digest:
    """The hash of a shredder's rendered parts and the number of records they held."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.records = 0

    def update(self, data: bytes) -> None:
        self._hash.update(data)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


async def _json_lines(
    opening: bytes, closing: bytes, lines: AsyncIterator[bytes], digest: Digest
) -> AsyncIterator[bytes]:
    buffer = bytearray(opening)
    first = True
    async for line in lines:
        digest.records += 1
        buffer += (b"\n  " if first else b",\n  ") + line
        first = False
        if len(buffer) >= _BUFFER:
            yield bytes(buffer)
            buffer.clear()
    buffer += (b"\n" if not first else b"") + closing + b"\n"
    yield bytes(buffer)


async def _map_lines(pairs: AsyncIterator[tuple[str, Any]]) -> AsyncIterator[bytes]:
    async for key, value in pairs:
        yield _dumps(key) + b": " + _dumps(value)


async def _list_lines(items: AsyncIterator[Any]) -> AsyncIterator[bytes]:
    async for item in items:
        yield _dumps(item)


async def render(part: Part, store: FileStore, digest: Digest) -> AsyncIterator[bytes]:
    """The part's bytes; the digest sees its name and content and counts its records."""
    digest.update(part.name.encode() + b"\0")
    if isinstance(part, JsonMap):
        chunks = _json_lines(b"{", b"}", _map_lines(part.pairs), digest)
    elif isinstance(part, JsonList):
        chunks = _json_lines(b"[", b"]", _list_lines(part.items), digest)
    else:
        assert isinstance(part, StoredFile)
        digest.records += 1
        chunks = _stored(store, part.key)
    async for chunk in chunks:
        digest.update(chunk)
        yield chunk
    digest.update(b"\0")


async def _stored(store: FileStore, key: str) -> AsyncIterator[bytes]:
    try:
        async for chunk in store.open(key):
            yield chunk
    except (StoredFileMissing, ValueError):  # gone already, or a key the store cannot hold
        return


async def digest_of(shredder: Shredder, run: ShredRun) -> Digest:
    """What the shredder would export now, as a hash (nothing is written)."""
    digest = Digest()
    async for part in shredder.parts(run):
        async for _chunk in render(part, run.store, digest):
            pass
    return digest


async def write_archive(
    handle: BinaryIO,
    chosen: Sequence[Shredder],
    run: ShredRun,
    *,
    organizer: str,
    event: str,
    exported: dt.datetime,
) -> dict[str, Any]:
    """Writes the ZIP (a folder per shredder, then the manifest); returns the manifest."""
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "organizer": organizer,
        "event": event,
        "exported": exported.isoformat(),
        "shredders": {},
    }
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for shredder in chosen:
            digest = Digest()
            async for part in shredder.parts(run):
                name = f"{shredder.identifier}/{part.name}"
                with archive.open(name, "w", force_zip64=True) as entry:
                    async for chunk in render(part, run.store, digest):
                        entry.write(chunk)
            manifest["shredders"][shredder.identifier] = {
                "verbose_name": shredder.verbose_name,
                "records": digest.records,
                "sha256": digest.hexdigest(),
            }
        archive.writestr(MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False))
    return manifest


class ArchiveUnreadable(Exception):
    """The stored export is missing or is not one of ours."""


async def read_manifest(store: FileStore, key: str) -> dict[str, Any]:
    """The manifest of a stored export (copied to a temporary file: ZIPs are read from the
    end, and the export may be large)."""
    with tempfile.TemporaryFile() as spool:
        try:
            async for chunk in store.open(key):
                spool.write(chunk)
        except StoredFileMissing:
            raise ArchiveUnreadable("The export file no longer exists.") from None
        spool.seek(0)
        return _manifest_from(spool)


def _manifest_from(spool: IO[bytes]) -> dict[str, Any]:
    try:
        with zipfile.ZipFile(spool) as archive:
            manifest = json.loads(archive.read(MANIFEST))
    except (zipfile.BadZipFile, KeyError, ValueError):
        raise ArchiveUnreadable("The export file is damaged.") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("shredders"), dict):
        raise ArchiveUnreadable("The export file is damaged.")
    return manifest
