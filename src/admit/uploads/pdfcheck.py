"""Reading a PDF's page sizes: run as ``python -m admit.uploads.pdfcheck <path>`` by
:func:`admit.uploads.sniff.inspect` in a child process with a time and memory bound.

It imports only pypdf and the standard library, so the child starts quickly; it prints
``{"pages": [[width_mm, height_mm], ...]}`` or ``{"error": "<reason the file is refused>"}``.
"""

from __future__ import annotations

import contextlib
import json
import sys
import warnings
from typing import BinaryIO

PT_PER_MM = 72 / 25.4
CHILD_MEMORY_BYTES = 2 * 1024**3


class PdfRefused(ValueError):
    """Not a usable PDF; the message says why."""


def pdf_page_sizes(handle: BinaryIO) -> list[tuple[float, float]]:
    """The (width, height) of every page in mm, as a viewer shows it (``/Rotate`` applied).

    Raises :class:`PdfRefused` for anything pypdf cannot read, an empty document, or one
    that needs a password."""
    from pypdf import PdfReader

    head = handle.read(1024)
    handle.seek(0)
    if b"%PDF-" not in head:
        raise PdfRefused("The file is not a PDF document.")
    try:
        reader = PdfReader(handle, strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise PdfRefused("The PDF document is protected by a password.")
        sizes = []
        for page in reader.pages:
            box = page.mediabox
            width, height = float(box.width), float(box.height)
            if (page.get("/Rotate") or 0) % 180 == 90:
                width, height = height, width
            sizes.append((width / PT_PER_MM, height / PT_PER_MM))
    except PdfRefused:
        raise
    except Exception:  # pypdf raises many kinds for broken files; all mean "not usable"
        raise PdfRefused("The file is not a readable PDF document.") from None
    if not sizes:
        raise PdfRefused("The PDF document has no pages.")
    if any(not (w > 0 and h > 0) for w, h in sizes):
        raise PdfRefused("The PDF document has a page without a size.")
    return sizes


def check(path: str) -> dict[str, object]:
    try:
        with open(path, "rb") as handle:
            return {"pages": pdf_page_sizes(handle)}
    except PdfRefused as exc:
        return {"error": str(exc)}
    except MemoryError:
        return {"error": "The PDF document is too complex to read."}
    except OSError:
        return {"error": "The file is not a readable PDF document."}


def main(args: list[str]) -> None:
    """``<path>``: check one file; ``--serve``: check the path on each line of stdin, one
    JSON answer a line, until stdin closes (a worker of :class:`admit.uploads.sniff.PdfPool`)."""
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_BYTES, CHILD_MEMORY_BYTES))
    warnings.simplefilter("ignore")
    if args[:1] != ["--serve"]:
        sys.stdout.write(json.dumps(check(args[0])))
        return
    for line in sys.stdin:
        sys.stdout.write(json.dumps(check(line.rstrip("\n"))) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
