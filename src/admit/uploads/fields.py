"""What a file field (a layout's ``background``, an item's ``picture``) does with its input.

A field reads back as an absolute URL (or null). On input it takes ``file:<uuid>`` (the
caller's upload, claimed for the field), null (no file), or its own current URL unchanged, so
that a client can PUT back what it read, and PATCH (which validates the merged state) works
whatever the base URL the client saw. Any other URL is refused: files come in through
``POST /api/v1/upload`` only.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.context import Principal
from admit.models import UploadedFile
from admit.uploads.service import MEDIA_PREFIX, InvalidUpload, claim_upload


@dataclass(frozen=True)
class FileChoice:
    """``keep`` the current file, ``clear`` the field, or ``set`` it to ``upload``."""

    action: str
    upload: UploadedFile | None = None


KEEP = FileChoice("keep")
CLEAR = FileChoice("clear")


def same_file(value: str, current_url: str | None) -> bool:
    """Whether ``value`` is the field's current media URL (any scheme and host)."""
    if not current_url:
        return False
    if value == current_url:
        return True
    try:
        path = unquote(urlsplit(value).path)
    except ValueError:
        return False
    current = unquote(urlsplit(current_url).path)
    return path.startswith(f"{MEDIA_PREFIX}/") and path == current


async def resolve_file_field(
    session: AsyncSession,
    principal: Principal,
    value: object,
    *,
    current_url: str | None,
    allowed_types: Collection[str],
) -> FileChoice:
    """The field's new state; raises :class:`InvalidUpload` with the field's message."""
    if value is None:
        return CLEAR
    if isinstance(value, str) and same_file(value, current_url):
        return KEEP
    if isinstance(value, str) and not value.startswith("file:"):
        raise InvalidUpload(
            "Upload the file with POST /api/v1/upload and send its id (file:<id>); a URL is "
            "only accepted when it is the field's current file."
        )
    return FileChoice("set", await claim_upload(session, principal, value, allowed_types))
