"""An item's ``picture``: an image upload, stored as its media path, read as an absolute URL.

The item keeps ``<uuid>/<name>`` (:func:`admit.uploads.service.media_path`) in its ``picture``
column, so reading items needs no extra query; the renderer's ``item_picture`` image gets the
upload with :func:`item_picture` and its bytes with :func:`admit.uploads.service.read_upload`.
A cloned item shares its source's picture file.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.http.context import Principal
from admit.kit.http.errors import FieldErrors
from admit.models import Item, UploadedFile
from admit.uploads.fields import FileChoice, resolve_file_field
from admit.uploads.service import (
    IMAGE_TYPES,
    InvalidUpload,
    media_path,
    media_url,
    upload_by_path,
)


def picture_url(base_url: str, item: Item) -> str | None:
    return media_url(base_url, item.picture)


async def resolve_picture(
    session: AsyncSession, principal: Principal, value: object, item: Item | None, base_url: str
) -> FileChoice:
    """What a write does to the picture; 400 ``{"picture": [...]}`` for a bad value."""
    current = picture_url(base_url, item) if item is not None else None
    try:
        return await resolve_file_field(
            session, principal, value, current_url=current, allowed_types=IMAGE_TYPES
        )
    except InvalidUpload as exc:
        raise FieldErrors.single("picture", str(exc)) from None


def apply_picture(item: Item, choice: FileChoice) -> None:
    if choice.action == "clear":
        item.picture = None
    elif choice.action == "set" and choice.upload is not None:
        item.picture = media_path(choice.upload)


async def item_picture(session: AsyncSession, item: Item) -> UploadedFile | None:
    """The upload an item's picture shows (None without one)."""
    return await upload_by_path(session, item.picture)
