"""Coalescing concurrent calls: one call for everything that queued while the last one ran.

When many requests of one process need the same serialised step (taking from one quota, say),
sending them to the database one by one queues them on a row lock there, and each waiter costs
the database CPU. A :class:`Coalescer` keeps at most one call per key in flight: what arrives
meanwhile waits here and goes in the next call, as one batch. Under light load every batch has
one member and nothing waits; under a rush the batches grow and the per-call costs (round trip,
lock, commit) are shared.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
R = TypeVar("R")

Flush = Callable[[K, list[T]], Awaitable[Sequence[R]]]


class Coalescer(Generic[K, T, R]):
    def __init__(self, flush: Flush[K, T, R], max_batch: int = 64) -> None:
        self._flush = flush
        self._max_batch = max_batch
        self._queues: dict[K, list[tuple[T, asyncio.Future[R]]]] = {}
        self._running: set[K] = set()
        self._tasks: set[asyncio.Task[None]] = set()  # the loop holds tasks weakly only

    async def submit(self, key: K, item: T) -> R:
        """The result for ``item``; raises what the flush call raised for its batch."""
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._queues.setdefault(key, []).append((item, future))
        if key not in self._running:
            self._running.add(key)
            task = asyncio.ensure_future(self._drain(key))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await future

    async def _drain(self, key: K) -> None:
        try:
            while queue := self._queues.get(key):
                batch = queue[: self._max_batch]
                del queue[: self._max_batch]
                if not queue:
                    del self._queues[key]
                try:
                    results = await self._flush(key, [item for item, _ in batch])
                except BaseException as exc:  # every member learns of it; none is left hanging
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    if not isinstance(exc, Exception):
                        raise
                else:
                    for (_, future), result in zip(batch, results, strict=True):
                        if not future.done():
                            future.set_result(result)
        finally:
            self._running.discard(key)
