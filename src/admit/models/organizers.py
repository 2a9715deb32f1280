from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from admit.db import Base, JSONType, UTCDateTime, utcnow


class Organizer(Base):
    __tablename__ = "organizers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(50), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    plugins: Mapped[list[str]] = mapped_column(JSONType, default=list)
    # The organizer's settings that were set (key -> JSON value); unset keys show the default
    # of their definition (``organizers/settings.py``).
    settings: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
