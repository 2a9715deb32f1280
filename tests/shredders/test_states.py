"""Every state of the spec's table for the shred export and the shred task, driven without an
engine: jobs stay waiting until the test runs them (or puts them into a state)."""

from __future__ import annotations

import datetime as dt

from admit.db import utcnow
from admit.jobs import sweep as jobsweep
from admit.shredders import service
from tests.factories import auth
from tests.shredders import helpers as sh


async def _start(client, world, factory, token=None):
    await sh.end_event(factory, world.event)
    answer = await client.post(
        sh.url(world, "export/"),
        json={"shredders": ["phone_numbers", "order_emails"]},
        headers=auth(token or world.admin),
    )
    assert answer.status_code == 202, answer.text
    return answer.json()


async def test_export_states_on_download_and_shred(client, world, factory):
    app = client._transport.app
    links = await _start(client, world, factory)
    download, shred = sh.path_of(links["download"]), sh.path_of(links["shred"])
    uuid, secret = sh.ids_of(download)
    assert sh.ids_of(shred) == (uuid, secret)

    # waiting
    answer = await client.get(download, headers=auth(world.admin))
    assert answer.status_code == 409 and answer.headers["retry-after"] == "1"
    assert answer.json() == {"status": "waiting", "percentage": None}
    answer = await client.post(shred, headers=auth(world.admin))
    assert answer.status_code == 409 and answer.headers["retry-after"] == "1"
    assert answer.json()["status"] == "waiting" and "detail" in answer.json()

    # running
    await sh.set_job(app, uuid, status="running", percentage=40)
    answer = await client.get(download, headers=auth(world.admin))
    assert answer.json() == {"status": "running", "percentage": 40}
    answer = await client.post(shred, headers=auth(world.admin))
    assert answer.status_code == 409 and answer.json()["status"] == "running"

    # failed
    await sh.set_job(app, uuid, status="failed", message="Out of paper.")
    answer = await client.get(download, headers=auth(world.admin))
    assert answer.status_code == 410
    assert answer.json() == {"status": "failed", "message": "Out of paper."}
    answer = await client.post(shred, headers=auth(world.admin))
    assert answer.status_code == 410
    assert answer.json()["status"] == "failed" and answer.json()["message"] == "Out of paper."

    # finished: 200 with the file
    await sh.set_job(app, uuid, status="waiting", message=None, run_after=utcnow())
    job = await sh.run_job(app, uuid)
    assert job.status == "finished", job.message
    answer = await client.get(download, headers=auth(world.admin))
    assert answer.status_code == 200 and "manifest.json" in sh.unzip(answer.content)

    # gone: expired
    await sh.set_job(app, uuid, expires=utcnow() - dt.timedelta(seconds=1))
    assert (await client.get(download, headers=auth(world.admin))).status_code == 404
    assert (await client.post(shred, headers=auth(world.admin))).status_code == 404


async def test_unknown_foreign_and_forged_exports_are_404(client, world, factory):
    app = client._transport.app
    links = await _start(client, world, factory)
    uuid, secret = sh.ids_of(links["download"])
    await sh.run_job(app, uuid)
    colleague = await factory.admin_token(world.org)
    bad = [
        (world.admin, "0" * 32, secret),
        (world.admin, uuid, "wrong"),
        (world.admin, "x" * 300, secret),
        (world.admin, "é" * 40, "%20"),
        (colleague, uuid, secret),  # the same organizer and rights, another credential
    ]
    for token, first, second in bad:
        for method, action in (("GET", "download"), ("POST", "shred")):
            answer = await client.request(
                method, sh.url(world, f"{action}/{first}/{second}/"), headers=auth(token)
            )
            assert answer.status_code == 404, (token, first, second, action, answer.text)
            assert set(answer.json()) == {"detail"}
    # The file of a finished export vanished from the store: nothing to shred after.
    job = await sh.job_by_uuid(app, uuid)
    await app.state.background.store.delete(job.result_key)
    answer = await client.post(sh.path_of(links["shred"]), headers=auth(world.admin))
    assert answer.status_code == 404


async def test_shred_status_states(client, world, factory, monkeypatch):
    app = client._transport.app
    links = await _start(client, world, factory)
    uuid, _ = sh.ids_of(links["download"])
    await sh.run_job(app, uuid)
    answer = await client.post(sh.path_of(links["shred"]), headers=auth(world.admin))
    assert answer.status_code == 202, answer.text
    assert set(answer.json()) == {"status"}
    status = sh.path_of(answer.json()["status"])
    shred_uuid, shred_secret = sh.ids_of(status)
    assert shred_uuid != uuid and shred_secret != sh.ids_of(links["download"])[1]

    # waiting, then running: 409
    answer = await client.get(status, headers=auth(world.admin))
    assert answer.status_code == 409 and answer.headers["retry-after"] == "1"
    assert answer.json()["status"] == "waiting"
    await sh.set_job(app, shred_uuid, status="running")
    answer = await client.get(status, headers=auth(world.admin))
    assert answer.status_code == 409 and answer.json()["status"] == "running"
    # Asking to shred the same export again while it runs: 409, and no second job.
    again = await client.post(sh.path_of(links["shred"]), headers=auth(world.admin))
    assert again.status_code == 409 and again.json()["status"] == "running"

    # failed: 417
    await sh.set_job(app, shred_uuid, status="failed", message="The ticket shop is live.")
    answer = await client.get(status, headers=auth(world.admin))
    assert answer.status_code == 417
    assert answer.json() == {"status": "failed", "message": "The ticket shop is live."}

    # finished: 200
    await sh.set_job(app, shred_uuid, status="waiting", message=None, run_after=utcnow())
    job = await sh.run_job(app, shred_uuid)
    assert job.status == "finished", job.message
    answer = await client.get(status, headers=auth(world.admin))
    assert answer.status_code == 200 and answer.json() == {"status": "finished"}
    assert job.expires is not None
    assert dt.timedelta(minutes=59) < job.expires - job.finished <= dt.timedelta(hours=1)

    # Another credential, a forged secret, an unknown id: all "unknown", 410.
    colleague = await factory.admin_token(world.org)
    for token, path in (
        (colleague, status),
        (world.admin, sh.url(world, f"status/{shred_uuid}/forged/")),
        (world.admin, sh.url(world, f"status/{'0' * 32}/{shred_secret}/")),
        (world.admin, sh.url(world, f"status/{'é' * 40}/x/")),
    ):
        answer = await client.get(path, headers=auth(token))
        assert answer.status_code == 410, (path, answer.text)
        assert answer.json()["status"] == "unknown"

    # Over an hour later the status is unknown: first by its expiry ...
    later = utcnow() + dt.timedelta(hours=1, minutes=1)
    monkeypatch.setattr(service, "utcnow", lambda: later)
    answer = await client.get(status, headers=auth(world.admin))
    assert answer.status_code == 410 and answer.json()["status"] == "unknown"
    monkeypatch.undo()
    assert (await client.get(status, headers=auth(world.admin))).status_code == 200
    # ... then because the sweep of that time deleted it.
    async with app.state.db.sessionmaker() as session:
        counts = await jobsweep.sweep(
            session, later, app.state.settings, app.state.background.store
        )
        await session.commit()
    assert counts["deleted"] >= 1
    answer = await client.get(status, headers=auth(world.admin))
    assert answer.status_code == 410


async def test_a_failed_shred_can_be_started_again(client, world, factory):
    app = client._transport.app
    links = await _start(client, world, factory)
    uuid, _ = sh.ids_of(links["download"])
    await sh.run_job(app, uuid)
    first = await client.post(sh.path_of(links["shred"]), headers=auth(world.admin))
    first_status = sh.path_of(first.json()["status"])
    shred_uuid, _ = sh.ids_of(first_status)
    # The shop went live before the shred ran: it fails and says why.
    await sh.end_event(factory, world.event, live=True)
    job = await sh.run_job(app, shred_uuid)
    assert job.status == "failed" and job.attempts == 1
    answer = await client.get(first_status, headers=auth(world.admin))
    assert answer.status_code == 417
    assert answer.json()["message"] == service.LIVE
    # While live, a new start is refused with 400 naming the reason.
    refused = await client.post(sh.path_of(links["shred"]), headers=auth(world.admin))
    assert refused.status_code == 400 and refused.json() == {"non_field_errors": [service.LIVE]}
    # Offline again, the same export can be shredded: a new shred with a new status URL.
    await sh.end_event(factory, world.event)
    second = await client.post(sh.path_of(links["shred"]), headers=auth(world.admin))
    assert second.status_code == 202, second.text
    second_status = sh.path_of(second.json()["status"])
    assert second_status != first_status
    assert (await client.get(first_status, headers=auth(world.admin))).status_code == 410
    job = await sh.run_job(app, sh.ids_of(second_status)[0])
    assert job.status == "finished", job.message
    assert (await client.get(second_status, headers=auth(world.admin))).status_code == 200
