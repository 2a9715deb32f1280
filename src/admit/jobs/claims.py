"""The statements that take and hold a job row: a claim moves ``waiting`` rows to ``running``
under a lease in one conditional update, and every later write of the worker is conditional on
still holding the job (``held_by``), so a worker that lost its lease cannot overwrite the next run.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, bindparam, update

from admit.models import Job

CLAIM = (
    update(Job)
    .where(
        Job.id.in_(bindparam("ids", expanding=True)),
        Job.status == "waiting",
        Job.run_after <= bindparam("now"),
    )
    .values(
        status="running",
        worker=bindparam("worker"),
        lease_until=bindparam("lease_until"),
        attempts=Job.attempts + 1,
        started=bindparam("now"),
        message=None,
    )
    .returning(
        Job.id,
        Job.uuid,
        Job.kind,
        Job.input,
        Job.attempts,
        Job.max_attempts,
        Job.organizer_id,
        Job.event_id,
        Job.owner_kind,
        Job.owner_id,
    )
)


def held_by(job_id: int, worker: str) -> Any:
    return and_(Job.id == job_id, Job.worker == worker, Job.status == "running")
