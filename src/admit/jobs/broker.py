"""The taskiq broker that carries job ids: in process (embedded), Redis streams or RabbitMQ.

The broker only says "job N is ready"; the job row is the truth. Redis streams and RabbitMQ
acknowledge a message after the job ran, so a message whose worker died is delivered again
(and finds the job claimed or done, which is harmless); a message the broker loses is sent
again by the scheduler's sweep.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from taskiq import AsyncBroker

log = logging.getLogger(__name__)


class InProcessTask:
    """A registered task of :class:`InProcessBroker`: ``kiq`` starts it here and returns."""

    def __init__(self, broker: InProcessBroker, run: Callable[[Any], Awaitable[None]]) -> None:
        self.broker = broker
        self.run = run

    async def kiq(self, payload: Any) -> None:
        task = asyncio.create_task(self._guarded(payload))
        self.broker.running.add(task)
        task.add_done_callback(self.broker.running.discard)

    async def _guarded(self, payload: Any) -> None:
        try:
            await self.run(payload)
        except Exception:
            log.exception("in-process task failed")


class InProcessBroker:
    """The embedded server's broker: a message is a task of this process. taskiq (and the
    HTTP client its package loads) costs an API process about 11 MB it has no use for."""

    is_worker_process = True

    def __init__(self) -> None:
        self.running: set[asyncio.Task[None]] = set()

    def register_task(
        self, run: Callable[[Any], Awaitable[None]], *, task_name: str
    ) -> InProcessTask:
        return InProcessTask(self, run)

    async def startup(self) -> None:
        return None

    async def wait_all(self) -> None:
        """Until every started task (and any task those started) has ended."""
        while self.running:
            await asyncio.gather(*self.running, return_exceptions=True)

    async def shutdown(self) -> None:
        for task in list(self.running):
            task.cancel()
        await asyncio.gather(*self.running, return_exceptions=True)


def create_broker(
    url: str | None, *, queue: str, lease_seconds: float, prefetch: int
) -> AsyncBroker | InProcessBroker:
    """``None``: jobs run in this process. ``redis://`` / ``rediss://``: a Redis stream with
    a consumer group. ``amqp://`` / ``amqps://``: a durable RabbitMQ queue."""
    if url is None:
        return InProcessBroker()
    if url.startswith(("redis://", "rediss://", "unix://")):
        from taskiq_redis import RedisStreamBroker

        return RedisStreamBroker(
            url,
            queue_name=queue,
            consumer_group_name=f"{queue}-workers",
            # A group made after jobs were sent still gets them (the stream is bounded).
            consumer_id="0",
            # Messages of a dead worker go to another one after this (ms); the job's own
            # lease decides whether it runs again.
            idle_timeout=int(max(lease_seconds * 2, 10) * 1000),
            unacknowledged_lock_timeout=max(lease_seconds, 5),
            xread_count=prefetch,
            xread_block=1000,
            # Acknowledged entries are of no use: the stream stays bounded.
            maxlen=1_000_000,
        )
    if url.startswith(("amqp://", "amqps://")):
        from taskiq_aio_pika import AioPikaBroker
        from taskiq_aio_pika.exchange import Exchange
        from taskiq_aio_pika.queue import Queue

        return AioPikaBroker(
            url,
            qos=prefetch,
            exchange=Exchange(name=queue),
            task_queues=[Queue(name=queue)],
        )
    raise ValueError("the broker URL must start with redis://, rediss:// or amqp://")
