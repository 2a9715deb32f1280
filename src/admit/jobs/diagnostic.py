"""``noop``: the job that does nothing (or waits, fails or writes a file when asked).

It proves the whole path — enqueue, broker, worker, lease, result download — without side
effects: ``admit jobs ping`` sends one to see that workers are alive, and the job benchmark
drains thousands of them.
"""

from __future__ import annotations

import asyncio

from admit.jobs.queue import JobContext, JobFailed, job_kind

MAX_SECONDS = 600


@job_kind("noop", max_attempts=3, keep_hours=1)
async def noop(ctx: JobContext) -> str | None:
    seconds = float(ctx.input.get("seconds") or 0)
    seconds = max(0.0, min(seconds, MAX_SECONDS))
    steps = max(1, int(seconds))
    for step in range(steps if seconds else 0):
        await asyncio.sleep(seconds / steps)
        await ctx.progress(100 * (step + 1) // steps)
    if ctx.input.get("fail"):
        raise JobFailed(str(ctx.input["fail"])[:500])
    text = ctx.input.get("result")
    if text is not None:
        async with ctx.result_file("result.txt", "text/plain; charset=utf-8") as handle:
            handle.write(str(text).encode())
    return None
