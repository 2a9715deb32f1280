"""Rendering limits (issue 35): every job kind has a time limit the job runner enforces (the
job fails with a message and frees its slot; a ticket render's drawing thread stops at its
next page), and a caller has at most two ticket batches waiting or running (429, as exports)."""

from __future__ import annotations

import asyncio
import dataclasses
import time

from admit.jobs import queue as kit_jobs
from admit.jobs.fairgate import FairGate
from admit.tickets import routes as ticket_routes
from admit.tickets import tasks as ticket_tasks
from tests.factories import World, auth
from tests.jobs.helpers import start_job, wait_for
from tests.tickets import helpers as h

RENDER = "ticketpdfrenderer/render_batch/"


def limited(monkeypatch, kind: str, seconds: float) -> None:
    monkeypatch.setitem(
        kit_jobs.KINDS, kind, dataclasses.replace(kit_jobs.KINDS[kind], time_limit=seconds)
    )


async def test_every_kind_has_a_time_limit():
    assert all(0 < kind.time_limit <= 3600 for kind in kit_jobs.KINDS.values())
    assert kit_jobs.KINDS[ticket_tasks.BATCH_KIND].time_limit == ticket_tasks.RENDER_TIME_LIMIT


async def test_a_job_past_its_limit_fails_with_a_message_and_frees_its_slot(
    clean_app, background, monkeypatch
):
    """The real engine, one slot: a job that would run 30 s is stopped after 0.5 s, failed
    with a message, and the next job runs in the slot it freed."""
    engine = background.engine
    monkeypatch.setattr(engine, "_gate", FairGate(1))
    limited(monkeypatch, "noop", 0.5)
    started = time.monotonic()
    slow, _ = await start_job(clean_app, "noop", {"seconds": 30})
    quick, _ = await start_job(clean_app, "noop", {"result": "done"})
    job = await wait_for(clean_app, slow, seconds=20)
    assert job.status == "failed"
    assert job.message == "The job took longer than its limit of 0.5 seconds and was stopped."
    assert (await wait_for(clean_app, quick, seconds=20)).status == "finished"
    assert time.monotonic() - started < 15
    assert job.attempts == 1  # not retried: it would take too long again


async def test_a_ticket_render_past_its_limit_stops_drawing(
    client, world: World, factory, monkeypatch
):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    _, positions = await h.order(factory, world.event, item, h.NAMES * 10)
    await h.layout(app, world.event, h.TEXT_LAYOUT, default=True)
    limited(monkeypatch, ticket_tasks.BATCH_KIND, 0.05)
    drawn: list[int] = []
    original = ticket_tasks.render_pages

    async def slow_pages(*args, **kw):
        stopped = kw["stopped"]

        def slowly() -> bool:  # each page takes 0.1 s
            time.sleep(0.1)
            drawn.append(1)
            return stopped()

        kw["stopped"] = slowly
        return await original(*args, **kw)

    monkeypatch.setattr(ticket_tasks, "render_pages", slow_pages)
    parts = [{"orderposition": p.id} for p in positions]
    response = await client.post(
        h.url(world, RENDER), json={"parts": parts}, headers=auth(world.admin)
    )
    assert response.status_code == 202, response.text
    [job] = await h.run_waiting(app)
    assert job.status == "failed" and "took longer than its limit" in job.message
    await asyncio.sleep(0.5)  # the drawing thread saw the flag at its next page and ended
    settled = len(drawn)
    await asyncio.sleep(0.5)
    assert len(drawn) == settled < len(positions)


async def test_ticket_batches_per_caller_are_limited(client, world: World, factory, monkeypatch):
    item = await h.ticket_item(factory, world.event)
    _, (position,) = await h.order(factory, world.event, item, ["Ada"])
    body = {"parts": [{"orderposition": position.id}]}
    url = h.url(world, RENDER)
    answers = [await client.post(url, json=body, headers=auth(world.admin)) for _ in range(3)]
    assert [a.status_code for a in answers] == [202, 202, 429], answers[-1].text
    assert int(answers[-1].headers["Retry-After"]) >= 1
    assert answers[-1].json() == {
        "detail": "You can run at most 2 ticket batches at the same time. Please wait until "
        "one of them has finished."
    }
    assert ticket_routes.MAX_RUNNING_BATCHES == 2
    # Another caller has slots of its own.
    other = await factory.admin_token(world.org)
    assert (await client.post(url, json=body, headers=auth(other))).status_code == 202


async def test_layouts_bound_their_text_at_save(client, world: World):
    """Every element within its own bounds, but together more text than a page can draw
    quickly: refused at save (400 naming the layout)."""
    url = h.url(world, "ticketlayouts/")
    element = h.text_element("other", text="x" * 9_000)
    body = {"name": "Wordy", "layout": [element] * 6}  # 54,000 characters
    response = await client.post(url, json=body, headers=auth(world.admin))
    assert response.status_code == 400, response.text
    assert response.json() == {
        "layout": ["A layout's texts may hold at most 50,000 characters together."]
    }
    body["layout"] = [element] * 5
    assert (await client.post(url, json=body, headers=auth(world.admin))).status_code == 201
