"""Rendered ticket PDFs: they print names, e-mail addresses and answers, so they go too.

A rendered ticket is a job's result file named by ``ticket_files``. Every shredder that changes
what a ticket may print drops the event's rendered tickets in its transaction (a later
download renders the ticket again from what is left); ``cachedtickets`` does only that, as the
reference's shredder of the same name. There is nothing to export: the PDFs show data the
other shredders export.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from sqlalchemy import delete, select

from admit.models import Job, TicketFile
from admit.shredders.base import Part, Shredder, ShredRun, register


async def drop_ticket_files(run: ShredRun) -> None:
    """Deletes the event's rendered tickets: their render jobs (and with them the
    ``ticket_files`` rows) now, their files right before the commit."""
    jobs = select(TicketFile.job_id).where(TicketFile.event_id == run.event_id)
    keys = await run.session.scalars(
        select(Job.result_key).where(Job.id.in_(jobs), Job.result_key.is_not(None))
    )
    run.delete_keys.extend(k for k in keys if k)
    await run.session.execute(
        delete(Job).where(Job.id.in_(jobs)).execution_options(synchronize_session=False)
    )


@register
class CachedTicketShredder(Shredder):
    identifier = "cachedtickets"
    verbose_name = "Cached ticket files"

    async def parts(self, run: ShredRun) -> AsyncIterator[Part]:
        return
        yield  # an async generator with nothing to export

    async def shred(self, run: ShredRun) -> None:
        await drop_ticket_files(run)
