"""Leaving: the ``exit_all_at`` job and quotas released by tickets that left.

``exit_all_at``: a periodic task (every minute, from the scheduler) checks out everyone still
inside a list whose ``exit_all_at`` has passed, with exits dated at that moment, and moves
``exit_all_at`` on by one day (same local time in the event's zone, across DST changes). A
process claims a list with a conditional UPDATE of ``exit_all_at``, so exactly one process
does the work. Until the job ran, redeem already treats such entries as exited (lazily, see
``decide.inside``).

``release_after_exit``: for quotas with that flag, tickets whose latest successful check-in
(on any list of the event) is an exit no longer take from the quota. The count starts from
the event's exit scans (index ``event_id, type, position_id``), so it costs as much as there
are exits, not tickets sold; quotas without the flag cost nothing.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from typing import TYPE_CHECKING

from sqlalchemy import and_, exists, func, literal, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from admit.db import utcnow
from admit.jobs.scheduler import PeriodicTask, periodic
from admit.models import Checkin, CheckinList, Event, Order, OrderPosition, Quota
from admit.quotas import availability
from admit.quotas.availability import _position_matches

if TYPE_CHECKING:
    from admit.config import Settings
    from admit.jobs.storage import FileStore


def next_day(moment: dt.datetime, timezone: str) -> dt.datetime:
    """The same local time one day later."""
    try:
        tz = zoneinfo.ZoneInfo(timezone or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        tz = dt.UTC
    local = moment.astimezone(tz)
    following = dt.datetime.combine(local.date() + dt.timedelta(days=1), local.time(), tzinfo=tz)
    return following.astimezone(dt.UTC)


async def exit_all(session: AsyncSession, now: dt.datetime | None = None) -> int:
    """Runs every due ``exit_all_at``; returns the number of exits written."""
    now = now or utcnow()
    due = (
        await session.execute(
            select(CheckinList.id, CheckinList.exit_all_at, Event.timezone)
            .join(Event, Event.id == CheckinList.event_id)
            .where(CheckinList.exit_all_at.is_not(None), CheckinList.exit_all_at <= now)
        )
    ).all()
    written = 0
    for list_id, moment, timezone in due:
        following = next_day(moment, timezone)
        while following <= now:  # the job was down for days: skip what is past
            following = next_day(following, timezone)
        claimed = await session.execute(
            update(CheckinList)
            .where(CheckinList.id == list_id, CheckinList.exit_all_at == moment)
            .values(exit_all_at=following)
            .returning(CheckinList.id)
        )
        if claimed.scalar() is None:
            continue  # another process took it
        written += await _exit_everyone(session, list_id, moment)
        await session.commit()
    return written


async def _exit_everyone(session: AsyncSession, list_id: int, moment: dt.datetime) -> int:
    later = aliased(Checkin)
    newer = exists().where(
        later.position_id == Checkin.position_id,
        later.list_id == Checkin.list_id,
        later.successful.is_(True),
        or_(
            later.datetime > Checkin.datetime,
            and_(later.datetime == Checkin.datetime, later.id > Checkin.id),
        ),
    )
    highest = aliased(Checkin)
    next_seq = (
        select(func.coalesce(func.max(highest.seq), 0) + 1)
        .where(highest.position_id == Checkin.position_id, highest.list_id == Checkin.list_id)
        .scalar_subquery()
    )
    now = utcnow()
    inside = select(
        Checkin.event_id,
        Checkin.list_id,
        Checkin.position_id,
        next_seq,
        literal("exit"),
        literal(moment, Checkin.datetime.type),
        literal(now, Checkin.created.type),
        literal(True),
        literal(True),
        literal(False),
    ).where(
        Checkin.list_id == list_id,
        Checkin.successful.is_(True),
        Checkin.type == "entry",
        Checkin.datetime <= moment,
        ~newer,
    )
    columns = [
        "event_id",
        "list_id",
        "position_id",
        "seq",
        "type",
        "datetime",
        "created",
        "successful",
        "auto_checked_in",
        "forced",
    ]
    dialect = session.bind.dialect.name  # type: ignore[union-attr]
    module = postgresql if dialect == "postgresql" else sqlite
    stmt = (
        module.insert(Checkin)
        .from_select(columns, inside)
        .on_conflict_do_nothing()
        .returning(Checkin.id)
    )
    return len((await session.execute(stmt)).all())


async def exited_counter(
    session: AsyncSession, quotas: list[Quota], now: dt.datetime
) -> dict[int, int]:
    """``exited_orders`` of each quota that releases capacity after exit."""
    result: dict[int, int] = {}
    for quota in quotas:
        if not quota.release_after_exit:
            continue
        last_exit = (
            select(Checkin.position_id, func.max(Checkin.datetime).label("at"))
            .where(
                Checkin.event_id == quota.event_id,
                Checkin.type == "exit",
                Checkin.successful.is_(True),
            )
            .group_by(Checkin.position_id)
            .subquery()
        )
        entry = aliased(Checkin)
        re_entered = exists().where(
            entry.position_id == last_exit.c.position_id,
            entry.successful.is_(True),
            entry.type == "entry",
            entry.datetime > last_exit.c.at,
        )
        count = await session.scalar(
            select(func.count())
            .select_from(last_exit)
            .join(OrderPosition, OrderPosition.id == last_exit.c.position_id)
            .join(Order, Order.id == OrderPosition.order_id)
            .where(
                Order.status.in_(("n", "p")),
                OrderPosition.canceled.is_(False),
                _position_matches(
                    quota,
                    OrderPosition.item_id,
                    OrderPosition.variation_id,
                    OrderPosition.subevent_id,
                ),
                ~re_entered,
            )
        )
        result[quota.id] = int(count or 0)
    return result


def register() -> None:
    """Quotas subtract ``exited_orders`` (see :mod:`admit.quotas.availability`)."""
    availability.blocking_counters["exited_orders"] = exited_counter


@periodic
def _periodic_tasks(settings: Settings, store: FileStore) -> list[PeriodicTask]:
    return [PeriodicTask("checkin.exit_all", 60, exit_all)]
