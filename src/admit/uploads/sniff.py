"""Checking that an uploaded file is what its ``Content-Type`` claims, before anyone uses it.

A "PDF" must open with pypdf and have a page (the renderer embeds its pages); an image must be
recognised by Pillow as the declared format and verify, with a bounded pixel count (a
decompression bomb is refused before it is decoded).

pypdf recovers from broken files by scanning them, which on a crafted 10 MB file takes many
seconds of CPU (16 s measured for 10 MB of ``1 0 obj`` lines). So PDFs are read in a child
process (``python -m admit.uploads.pdfcheck <path>``) that is killed after
:data:`CHECK_SECONDS` and limited in memory: a hostile upload costs one bounded process, never
the server's threads. Images are checked in a worker thread (Pillow reads only headers and
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
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "admit.uploads.pdfcheck",
        path,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        out, _ = await asyncio.wait_for(child.communicate(), CHECK_SECONDS)
    except TimeoutError:
        raise NotThatType("The PDF document could not be read in time.") from None
    finally:
        if child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.wait()
    try:
        answer = json.loads(out)
    except ValueError:
        answer = {}
    if "error" in answer:
        raise NotThatType(str(answer["error"]))
    if child.returncode != 0 or not isinstance(answer.get("pages"), list):
        raise NotThatType("The file is not a readable PDF document.")
    return [(float(w), float(h)) for w, h in answer["pages"]]


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
