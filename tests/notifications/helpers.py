"""Reading the notifications outbox in tests: what a request added, in order."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import func, select

from admit.models import Notification
from tests.factories import Factory


class Outbox:
    """The rows written since the last :meth:`new` (so each step sees only its own)."""

    def __init__(self, factory: Factory) -> None:
        self.factory = factory
        self.seen = 0

    async def new(self) -> list[Notification]:
        async with self.factory.sessionmaker() as session:
            rows = list(
                await session.scalars(
                    select(Notification)
                    .where(Notification.id > self.seen)
                    .order_by(Notification.id)
                )
            )
        if rows:
            self.seen = rows[-1].id
        return rows

    async def skip(self) -> None:
        """Forgets what setup wrote."""
        async with self.factory.sessionmaker() as session:
            self.seen = int(await session.scalar(select(func.max(Notification.id))) or 0)

    async def actions(self) -> list[str]:
        return [row.action for row in await self.new()]

    async def expect(
        self, *expected: tuple[str, int | None, dict[str, Any]], organizer_id: int
    ) -> None:
        """Exactly these ``(action, event_id, payload)`` since the last look."""
        rows = await self.new()
        got = [(r.action, r.event_id, r.payload) for r in rows]
        assert got == list(expected)
        assert all(r.organizer_id == organizer_id for r in rows)


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json() if response.content else None
