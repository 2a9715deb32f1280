"""The carts' periodic work: expired cart positions give their quota back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from admit.carts.service import purge_expired
from admit.jobs.scheduler import PeriodicTask, periodic

if TYPE_CHECKING:
    from admit.config import Settings
    from admit.jobs.storage import FileStore


@periodic
def _periodic_tasks(settings: Settings, store: FileStore) -> list[PeriodicTask]:
    return [PeriodicTask("carts.purge_expired", 60, purge_expired)]
