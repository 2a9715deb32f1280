"""Checking that an uploaded file is what its ``Content-Type`` claims, before anyone uses it.

A "PDF" must open with pypdf and have a page (the renderer embeds its pages); an image must be
recognised by Pillow as the declared format and verify, with a bounded pixel count (a
decompression bomb is refused before it is decoded).

pypdf recovers from broken files by scanning them, which on a crafted 10 MB file takes many
seconds of CPU (16 s measured for 10 MB of ``1 0 obj`` lines). So PDFs are read in child
processes (``python -m admit.uploads.pdfcheck --serve``), a pool of at most
:data:`PDF_WORKERS` per server process that are reused from check to check: a check waits for
a free worker (at most :data:`QUEUE_SECONDS`, then the upload is answered 503), and a worker
taking longer than :data:`CHECK_SECONDS` is killed and replaced. A burst of hostile uploads
costs a bounded number of bounded processes, never one process each, never the server's
threads. Images are checked in a worker thread (Pillow reads only headers and
verifies without decoding).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import warnings
from typing import BinaryIO

# Widest image accepted (width x height); well above any ticket picture, far below a bomb.
MAX_PIXELS = 40_000_000
CHECK_SECONDS = 10.0
# PDF checker processes per server process, and how long a check waits for a free one.
PDF_WORKERS = 2
QUEUE_SECONDS = 30.0

_IMAGE_FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF"}
PageSizes = list[tuple[float, float]]


class NotThatType(ValueError):
    """The content does not match the declared type; the message says why."""


async def inspect(path: str, content_type: str) -> PageSizes | None:
    """Checks the file at ``path``; a PDF's page sizes (mm), None for an image. Raises
    :class:`NotThatType` with the reason the file is refused."""
    if content_type in _IMAGE_FORMATS:
        await asyncio.to_thread(_check_image_file, path, _IMAGE_FORMATS[content_type])
        return None
    if content_type != "application/pdf":  # pragma: no cover - checked before
        raise NotThatType(f'Content type "{content_type}" is not allowed.')
    answer = await pool().check(path)
    if "error" in answer:
        raise NotThatType(str(answer["error"]))
    pages = answer.get("pages")
    if not isinstance(pages, list):
        raise NotThatType("The file is not a readable PDF document.")
    return [(float(w), float(h)) for w, h in pages]


class PoolBusy(Exception):
    """No PDF checker became free in time (the server is answering many uploads at once)."""


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()


class PdfPool:
    """At most :data:`PDF_WORKERS` checker processes, started when first needed and reused."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.idle: list[_Worker] = []
        self.slots = asyncio.Semaphore(size)
        self.started = 0  # processes started so far (a replaced one counts again)
        self.pids: set[int] = set()

    async def _spawn(self) -> _Worker:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "admit.uploads.pdfcheck",
            "--serve",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        self.started += 1
        self.pids.add(process.pid)
        return _Worker(process)

    async def check(self, path: str) -> dict[str, object]:
        try:
            await asyncio.wait_for(self.slots.acquire(), QUEUE_SECONDS)
        except TimeoutError:
            raise PoolBusy from None
        worker: _Worker | None = None
        try:
            while self.idle and worker is None:
                candidate = self.idle.pop()
                worker = candidate if candidate.alive else None
            worker = worker or await self._spawn()
            process = worker.process
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(path.encode() + b"\n")
                await process.stdin.drain()
                line = await asyncio.wait_for(process.stdout.readline(), CHECK_SECONDS)
            except TimeoutError:
                worker.kill()
                await process.wait()
                worker = None
                raise NotThatType("The PDF document could not be read in time.") from None
            except (ConnectionError, OSError):
                line = b""
            try:
                answer = json.loads(line)
            except ValueError:
                answer = None
            if not isinstance(answer, dict):  # the worker died (its memory bound, a crash)
                worker.kill()
                await process.wait()
                worker = None
                return {"error": "The file is not a readable PDF document."}
            return answer
        finally:
            if worker is not None:
                self.idle.append(worker)
            self.slots.release()


_pools: dict[asyncio.AbstractEventLoop, PdfPool] = {}


def pool() -> PdfPool:
    """This event loop's pool (a server process runs one loop)."""
    loop = asyncio.get_running_loop()
    found = _pools.get(loop)
    if found is None:
        for old in [key for key in _pools if key.is_closed()]:
            del _pools[old]
        found = _pools[loop] = PdfPool(PDF_WORKERS)
    return found


def _check_image_file(path: str, expected: str) -> None:
    with open(path, "rb") as handle:
        _check_image(handle, expected)


def _check_image(handle: BinaryIO, expected: str) -> None:
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(handle) as image:
                found = image.format
                width, height = image.size
                if found != expected:
                    raise NotThatType(
                        f"The file is not a {expected} image"
                        + (f" (it is a {found} image)." if found else ".")
                    )
                if width * height > MAX_PIXELS:
                    raise NotThatType(
                        f"The image is too large ({width}x{height} pixels; at most "
                        f"{MAX_PIXELS:,} pixels)."
                    )
                image.verify()
    except NotThatType:
        raise
    except Exception:  # unidentified, truncated, a bomb: Pillow raises many kinds
        raise NotThatType(f"The file is not a readable {expected} image.") from None
