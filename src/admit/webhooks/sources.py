"""The two outboxes webhooks announce: ``notifications`` (every action type but new check-ins)
and successful rows of ``checkins`` (``service.event.checkin``; the redeem path writes no
notification of its own). Each source reads its rows in two steps: cheap ``Row``s for
matching (and for the fan-out's cursor), then payloads for the rows some webhook wants."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from admit.checkin.store import CHECKIN_ACTION, checkin_payload
from admit.models import Checkin, Event, Notification, Order, OrderPosition, Organizer


@dataclass(frozen=True)
class Row:
    id: int
    organizer_id: int
    event_id: int | None
    action: str
    # False for rows that are not announced (failed scans): read only to move the cursor.
    wanted: bool = True


class Source:
    name: str
    table: Any

    async def rows(
        self, session: AsyncSession, where: ColumnElement[bool], limit: int | None = None
    ) -> list[Row]:
        raise NotImplementedError

    async def payloads(self, session: AsyncSession, ids: list[int]) -> dict[int, dict[str, Any]]:
        raise NotImplementedError

    async def max_id(self, session: AsyncSession) -> int:
        return int(await session.scalar(select(func.max(self.table.id))) or 0)


class NotificationSource(Source):
    name = "notification"
    table = Notification

    async def rows(
        self, session: AsyncSession, where: ColumnElement[bool], limit: int | None = None
    ) -> list[Row]:
        query = (
            select(
                Notification.id,
                Notification.organizer_id,
                Notification.event_id,
                Notification.action,
            )
            .where(where)
            .order_by(Notification.id)
            .limit(limit)
        )
        return [Row(*r) for r in (await session.execute(query)).all()]

    async def payloads(self, session: AsyncSession, ids: list[int]) -> dict[int, dict[str, Any]]:
        query = (
            select(
                Notification.id,
                Notification.action,
                Notification.payload,
                Organizer.slug,
                Event.slug,
            )
            .join(Organizer, Organizer.id == Notification.organizer_id)
            .outerjoin(Event, Event.id == Notification.event_id)
            .where(Notification.id.in_(ids))
        )
        out = {}
        for pk, action, stored, organizer, event in (await session.execute(query)).all():
            stored = stored if isinstance(stored, dict) else {}
            body = {
                "notification_id": pk,
                "organizer": organizer,
                # An event's deletion keeps its slug in the payload (the row has no event).
                "event": event if event is not None else stored.get("event"),
                "code": stored.get("code"),
                "action": action,
            }
            body.update({k: v for k, v in stored.items() if k not in body})
            out[pk] = body
        return out


class CheckinSource(Source):
    name = "checkin"
    table = Checkin

    async def rows(
        self, session: AsyncSession, where: ColumnElement[bool], limit: int | None = None
    ) -> list[Row]:
        query = (
            select(Checkin.id, Event.organizer_id, Checkin.event_id, Checkin.successful)
            .join(Event, Event.id == Checkin.event_id)
            .where(where)
            .order_by(Checkin.id)
            .limit(limit)
        )
        return [
            Row(pk, org, event, CHECKIN_ACTION, wanted=bool(ok))
            for pk, org, event, ok in (await session.execute(query)).all()
        ]

    async def payloads(self, session: AsyncSession, ids: list[int]) -> dict[int, dict[str, Any]]:
        earlier = aliased(Checkin)
        first = ~(
            select(earlier.id)
            .where(
                earlier.position_id == Checkin.position_id,
                earlier.id < Checkin.id,
                earlier.successful.is_(True),
                earlier.type == "entry",
            )
            .exists()
        )
        query = (
            select(
                Checkin.id,
                Checkin.list_id,
                Checkin.type,
                and_(Checkin.type == "entry", first),
                OrderPosition.id,
                OrderPosition.positionid,
                Order.code,
                Organizer.slug,
                Event.slug,
            )
            .join(OrderPosition, OrderPosition.id == Checkin.position_id)
            .join(Order, Order.id == OrderPosition.order_id)
            .join(Event, Event.id == Checkin.event_id)
            .join(Organizer, Organizer.id == Event.organizer_id)
            .where(Checkin.id.in_(ids))
        )
        out = {}
        for row in (await session.execute(query)).all():
            pk, list_id, kind, is_first, position_id, positionid, code, org, event = row
            body = checkin_payload(
                org,
                event,
                code,
                {"id": position_id, "positionid": positionid},
                list_id,
                kind,
                bool(is_first),
            )
            out[pk] = {"notification_id": pk, **body}
        return out


SOURCES: tuple[Source, ...] = (NotificationSource(), CheckinSource())
