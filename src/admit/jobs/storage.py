"""One storage interface for job results and uploaded files.

A local directory under the data dir by default (``ADMIT_DATA_DIR/files``); S3-compatible object
storage at scale (``ADMIT_STORAGE_URL=s3://…``, see :mod:`admit.jobs.storage_s3`). Writes are
atomic: a file becomes visible under its key only once it was written completely, so a
download can never serve a partial file, whatever happens to the writer. Reads stream in
chunks; nothing holds a whole file in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import stat
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import BinaryIO, Protocol

CHUNK_SIZE = 256 * 1024
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$")


class StoredFileMissing(FileNotFoundError):
    """No file under that key (never written, deleted, or expired)."""


def check_key(key: str) -> str:
    """Keys are relative slash-separated names of safe characters (no ``..``, no leading
    slash): a key can never address anything outside the store."""
    if not _KEY.match(key) or len(key) > 255 or any(p in {".", ".."} for p in key.split("/")):
        raise ValueError(f"invalid storage key: {key!r}")
    return key


class FileStore(Protocol):
    def writer(self, key: str) -> contextlib.AbstractAsyncContextManager[BinaryIO]:
        """A binary file to write; stored under ``key`` when the block ends without an
        exception, discarded otherwise."""
        ...

    def open(self, key: str) -> AsyncIterator[bytes]:
        """The file's content in chunks; raises :class:`StoredFileMissing` before the first."""
        ...

    async def size(self, key: str) -> int | None:
        """The file's size in bytes, or None when there is none."""
        ...

    async def delete(self, key: str) -> None:
        """Removes the file; a missing one is no error."""
        ...


class LocalFileStore:
    """Files in a directory; written next to their final name and renamed into place."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    @contextlib.asynccontextmanager
    async def writer(self, key: str) -> AsyncIterator[BinaryIO]:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Shortened name: a partial must fit the file system's name limit as the key does.
        partial = path.with_name(f".{path.name[:64]}.{uuid.uuid4().hex}.partial")
        handle = partial.open("wb")
        try:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
            os.replace(partial, path)
        finally:
            # Closing flushes what is buffered, which fails on a full disk: the partial
            # file goes all the same.
            with contextlib.suppress(OSError):
                handle.close()
            partial.unlink(missing_ok=True)

    async def open(self, key: str) -> AsyncIterator[bytes]:
        path = self._path(key)
        try:
            handle = path.open("rb")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise StoredFileMissing(key) from None
        with handle:
            while chunk := await asyncio.to_thread(handle.read, CHUNK_SIZE):
                yield chunk

    async def size(self, key: str) -> int | None:
        # A directory (from keys beneath this one) or a file in the path is no file here.
        try:
            status = self._path(key).stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        return status.st_size if stat.S_ISREG(status.st_mode) else None

    async def delete(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError, IsADirectoryError):
            self._path(key).unlink()

    async def remove_partials(self, older_than: float) -> int:
        """Deletes partial files (``writer`` leaves one when its process is killed) not
        written to for ``older_than`` seconds; returns how many."""
        return await asyncio.to_thread(_remove_partials, self.root, older_than)


def _remove_partials(root: Path, older_than: float) -> int:
    cutoff = time.time() - older_than
    removed = 0
    for directory, _dirs, names in os.walk(root):
        for name in names:
            if not (name.startswith(".") and name.endswith(".partial")):
                continue
            path = Path(directory) / name
            with contextlib.suppress(FileNotFoundError):
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
    return removed
