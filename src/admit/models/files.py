"""Uploaded files: what ``POST /api/v1/upload`` received, until a file field uses it.

An upload belongs to the credential that sent it; only that caller can put its id
(``file:<uuid>``) into a file field (a layout's background, a file answer). An upload that no
field took within its lifetime is deleted with its stored file; a used one has no expiry and
lives as long as something refers to it.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import BigInteger, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import Base, UTCDateTime, utcnow


class UploadedFile(Base):
    __tablename__ = "uploaded_files"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Public handle: the API names the file ``file:<uuid>``.
    uuid: Mapped[str] = mapped_column(String(32), unique=True)
    owner_kind: Mapped[str] = mapped_column(String(16))
    owner_id: Mapped[int] = mapped_column(Integer)
    filename: Mapped[str] = mapped_column(String(255))
    content_type: Mapped[str] = mapped_column(String(128))
    size: Mapped[int] = mapped_column(BigInteger)
    # Where the content lies in the file store.
    key: Mapped[str] = mapped_column(String(255))
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Unused uploads go away after this; None once a file field took the upload.
    expires: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True, index=True)
