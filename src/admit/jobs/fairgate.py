"""A gate of N slots shared fairly among tenants: when a slot frees, the waiter whose tenant
has the fewest slots in use goes next; among equals, the tenant that started the fewest jobs
since the gate last had no waiters (so a tenant's queue alternates with the others' even with
a single slot); then the earliest.

A worker runs jobs side by side in a few slots. Taken in arrival order (a semaphore), one
organizer's burst (eight ticket batches, a thousand webhook deliveries) holds every slot until
it drains, and another organizer's export waits behind all of it. With this gate the other
organizer's job takes the next free slot.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Hashable


class FairGate:
    def __init__(self, slots: int) -> None:
        self.free = slots
        self.in_use: Counter[Hashable] = Counter()
        self.started: Counter[Hashable] = Counter()
        self._waiters: list[tuple[int, Hashable, asyncio.Future[None]]] = []
        self._order = itertools.count()

    async def acquire(self, tenant: Hashable) -> None:
        if self.free > 0 and not self._waiters:
            self._take(tenant)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (next(self._order), tenant, future)
        self._waiters.append(entry)
        try:
            await future
        except asyncio.CancelledError:
            if entry in self._waiters:
                self._waiters.remove(entry)
            elif future.done() and not future.cancelled():
                self.release(tenant)  # granted just as it was cancelled: pass it on
            raise

    def release(self, tenant: Hashable) -> None:
        self.in_use[tenant] -= 1
        if self.in_use[tenant] <= 0:
            del self.in_use[tenant]
        self.free += 1
        self._wake()

    def _take(self, tenant: Hashable) -> None:
        self.free -= 1
        self.in_use[tenant] += 1
        self.started[tenant] += 1

    def _wake(self) -> None:
        while self.free > 0 and self._waiters:
            entry = min(self._waiters, key=lambda e: (self.in_use[e[1]], self.started[e[1]], e[0]))
            self._waiters.remove(entry)
            if entry[2].done():
                continue  # cancelled, its task not yet resumed: it no longer wants the slot
            self._take(entry[1])
            entry[2].set_result(None)
        if not self._waiters:
            self.started.clear()  # no contention: past use counts no more
