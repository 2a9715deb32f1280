"""The taskiq broker that carries job ids: in process (embedded), Redis streams or RabbitMQ.

The broker only says "job N is ready"; the job row is the truth. Redis streams and RabbitMQ
acknowledge a message after the job ran, so a message whose worker died is delivered again
(and finds the job claimed or done, which is harmless); a message the broker loses is sent
again by the scheduler's sweep.
"""

from __future__ import annotations

from taskiq import AsyncBroker, InMemoryBroker


def create_broker(
    url: str | None, *, queue: str, lease_seconds: float, prefetch: int
) -> AsyncBroker:
    """``None``: jobs run in this process. ``redis://`` / ``rediss://``: a Redis stream with
    a consumer group. ``amqp://`` / ``amqps://``: a durable RabbitMQ queue."""
    if url is None:
        return InMemoryBroker(max_stored_results=1, propagate_exceptions=False)
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
