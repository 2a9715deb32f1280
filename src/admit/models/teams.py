from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, Column, ForeignKey, Integer, String, Table
from sqlalchemy.orm import Mapped, mapped_column, relationship

from admit.db import Base, JSONType, UTCDateTime, utcnow
from admit.models.events import Event
from admit.models.users import User

team_members = Table(
    "team_members",
    Base.metadata,
    Column("team_id", ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True),
    Column("user_id", ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True),
)

team_limit_events = Table(
    "team_limit_events",
    Base.metadata,
    Column("team_id", ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True),
    Column("event_id", ForeignKey("events.id", ondelete="CASCADE"), primary_key=True, index=True),
)


class Team(Base):
    __tablename__ = "teams"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    organizer_id: Mapped[int] = mapped_column(ForeignKey("organizers.id"), index=True)
    name: Mapped[str] = mapped_column(String(190))
    all_events: Mapped[bool] = mapped_column(Boolean, default=False)
    require_2fa: Mapped[bool] = mapped_column(Boolean, default=False)
    all_event_permissions: Mapped[bool] = mapped_column(Boolean, default=False)
    limit_event_permissions: Mapped[list[str]] = mapped_column(JSONType, default=list)
    all_organizer_permissions: Mapped[bool] = mapped_column(Boolean, default=False)
    limit_organizer_permissions: Mapped[list[str]] = mapped_column(JSONType, default=list)

    limit_events: Mapped[list[Event]] = relationship(
        secondary=team_limit_events, lazy="raise", order_by=Event.slug, passive_deletes=True
    )
    members: Mapped[list[User]] = relationship(
        secondary=team_members, lazy="raise", passive_deletes=True
    )


class TeamAPIToken(Base):
    __tablename__ = "team_api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(190))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class TeamInvite(Base):
    __tablename__ = "team_invites"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    email: Mapped[str] = mapped_column(String(190))
    token: Mapped[str] = mapped_column(String(64), unique=True)
    created: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
