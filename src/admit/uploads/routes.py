"""``POST /api/v1/upload`` (any credential) and the public media URLs of used uploads.

The media route takes no credentials on purpose: file fields read back as plain absolute URLs
that integrations, shops and PDF tools fetch without an ``Authorization`` header, as they fetch
the reference's media URLs. What protects a file is its random uuid (122 bits) in the URL, and
only uploads a field has taken are served; a fresh upload stays private to its owner.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Path, Request
from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response, StreamingResponse

from admit.devices.access import NoCredentials
from admit.jobs.downloads import content_disposition
from admit.jobs.storage import StoredFileMissing
from admit.kit.http.context import Authenticated, Principal, Session
from admit.kit.http.errors import forbidden, not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.models import UploadedFile
from admit.uploads.service import UPLOAD_PERMISSIONS, may_upload, receive_upload, url_name

router = api_router(tags=["uploads"])


class UploadOut(BaseModel):
    id: str


_BODY = {
    "requestBody": {
        "required": True,
        "description": "The file itself, with its Content-Type and "
        'Content-Disposition: attachment; filename="..."',
        "content": {
            kind: {"schema": {"type": "string", "format": "binary"}}
            for kind in ("application/pdf", "image/png", "image/jpeg", "image/gif")
        },
    }
}


class UploadAccess(Authenticated):
    """A caller that could use a file: it may change a field that takes one (a layout's
    background, an item's picture) somewhere. Read-only credentials get 403."""

    permission = UPLOAD_PERMISSIONS[0]

    async def __call__(self, request: Request, session: Session) -> Principal:
        principal = await super().__call__(request, session)
        if not may_upload(principal):
            raise forbidden()
        return principal


@router.post("/upload", status_code=201, response_model=UploadOut, openapi_extra=_BODY)
async def upload(
    request: Request,
    session: Session,
    principal: Annotated[Principal, Depends(UploadAccess())],
) -> JSONResponse:
    """Upload a file

    Stores a file (PDF, PNG, JPEG or GIF; the body is the file, with its Content-Type and a
    Content-Disposition naming it) for a later request to refer to as `file:<id>`, such as a
    ticket layout's background. Unused uploads expire.
    """
    store = request.app.state.background.store
    stored = await receive_upload(request, session, principal, store)
    return JSONResponse({"id": f"file:{stored.uuid}"}, status_code=201)


@router.get("/media/{uuid}/{name}", response_class=StreamingResponse)
async def media(
    session: Annotated[AsyncSession, Depends(NoCredentials())],
    request: Request,
    uuid: Annotated[str, Path(description="The file's random id")],
    name: Annotated[str, Path(description="The file's name")],
) -> Response:
    """Download a stored file

    Answers a file stored for an object (a product picture, a layout background). The random id
    in the URL is the credential.
    """
    if len(uuid) != 32 or not all(c in "0123456789abcdef" for c in uuid):
        raise not_found()
    query = select(UploadedFile).where(UploadedFile.uuid == uuid, UploadedFile.expires.is_(None))
    stored = (await session.execute(query)).scalar_one_or_none()
    if stored is None or name != url_name(stored.filename):
        raise not_found()
    chunks = request.app.state.background.store.open(stored.key)
    try:
        first = await anext(chunks)
    except StoredFileMissing:
        raise not_found() from None
    except StopAsyncIteration:
        first = b""
    headers = {
        "Content-Length": str(stored.size),
        "Content-Disposition": content_disposition(stored.filename).replace(
            "attachment", "inline", 1
        ),
        # The content behind a uuid never changes.
        "Cache-Control": "public, max-age=86400",
        "X-Content-Type-Options": "nosniff",
    }
    return StreamingResponse(
        _stream(first, chunks), media_type=stored.content_type, headers=headers
    )


async def _stream(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if first:
        yield first
    async for chunk in rest:
        yield chunk
