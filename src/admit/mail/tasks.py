"""Mail delivery jobs (being written: the mail helper replaces this file)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.jobs import JobContext, job_kind


@job_kind("mail.send", max_attempts=10, keep_hours=24)
async def send_mail(ctx: JobContext) -> str | None:
    return "not yet implemented"


async def requeue_held_mails(session: AsyncSession, now: dt.datetime, *, settings: Any) -> None:
    return None
