"""What makes a shred fail, and how a shred that crashed half-way ends the second time."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select, update

from admit.db import utcnow
from admit.models import Job, Order, OrderPosition, Team, TeamAPIToken
from admit.shredders import service
from admit.shredders.attendees import AttendeeInfoShredder
from tests.factories import auth
from tests.shredders import helpers as sh


async def _exported(client, app, world, factory, shredders):
    sample = await sh.populate(client, app, world, factory)
    await sh.end_event(factory, world.event)
    answer = await client.post(
        sh.url(world, "export/"), json={"shredders": shredders}, headers=auth(world.admin)
    )
    links = answer.json()
    job = await sh.run_job(app, sh.ids_of(links["download"])[0])
    assert job.status == "finished", job.message
    return sample, links


async def _shred(client, app, world, links):
    answer = await client.post(sh.path_of(links["shred"]), headers=auth(world.admin))
    assert answer.status_code == 202, answer.text
    status = sh.path_of(answer.json()["status"])
    return status, sh.ids_of(status)[0]


async def test_data_changed_after_the_export_is_not_shredded(client, world, factory):
    app = client._transport.app
    sample, links = await _exported(client, app, world, factory, ["phone_numbers", "order_emails"])
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Order).where(Order.code == sample.plain).values(email="late@example.org")
        )
        await session.commit()
    status, shred_uuid = await _shred(client, app, world, links)
    job = await sh.run_job(app, shred_uuid)
    assert job.status == "failed"
    answer = await client.get(status, headers=auth(world.admin))
    assert answer.status_code == 417
    message = answer.json()["message"]
    assert message.startswith("E-mail addresses: the data changed after the export was taken.")
    async with factory.sessionmaker() as session:
        emails = await session.scalar(select(func.count()).where(Order.email.is_not(None)))
        phones = await session.scalar(select(func.count()).where(Order.phone.is_not(None)))
    assert (emails, phones) == (3, 2)  # nothing was removed, not even the unchanged phones
    # The export stays (it was not shredded).
    download = await client.get(sh.path_of(links["download"]), headers=auth(world.admin))
    assert download.status_code == 200


async def test_an_owner_who_lost_the_right_gets_failed_jobs(client, world, factory):
    app = client._transport.app
    await sh.end_event(factory, world.event)
    team = await factory.team(world.org, event_permissions=["event.orders:write"])
    token = await factory.token(team)
    answer = await client.post(
        sh.url(world, "export/"), json={"shredders": ["phone_numbers"]}, headers=auth(token)
    )
    links = answer.json()
    uuid, _ = sh.ids_of(links["download"])
    done = await sh.run_job(app, uuid)
    assert done.status == "finished"
    shred = await client.post(sh.path_of(links["shred"]), headers=auth(token))
    shred_uuid = sh.ids_of(shred.json()["status"])[0]
    async with factory.sessionmaker() as session:
        mine = TeamAPIToken.team_id == team.id
        await session.execute(update(TeamAPIToken).where(mine).values(active=False))
        await session.commit()
    job = await sh.run_job(app, shred_uuid)
    assert job.status == "failed" and "no longer valid" in job.message

    async with factory.sessionmaker() as session:
        await session.execute(update(TeamAPIToken).where(mine).values(active=True))
        await session.commit()
    again = await client.post(
        sh.url(world, "export/"), json={"shredders": ["phone_numbers"]}, headers=auth(token)
    )
    assert again.status_code == 202, again.text
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Team)
            .where(Team.id == team.id)
            .values(limit_event_permissions=["event.orders:read"])
        )
        await session.commit()
    export = await sh.run_job(app, sh.ids_of(again.json()["download"])[0])
    assert export.status == "failed" and "no longer have permission" in export.message


async def test_a_shred_that_crashed_half_way_finishes_on_its_next_run(
    client, world, factory, monkeypatch
):
    app = client._transport.app
    _, links = await _exported(client, app, world, factory, ["order_emails", "attendee_info"])
    status, shred_uuid = await _shred(client, app, world, links)
    original = AttendeeInfoShredder.shred
    calls = 0

    async def crash_once(self, run):
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("the worker's disk is full")
        await original(self, run)

    monkeypatch.setattr(AttendeeInfoShredder, "shred", crash_once)
    job = await sh.run_job(app, shred_uuid)
    assert job.status == "waiting" and "unexpectedly" in job.message  # retried later
    assert job.input["progress"] == {"verified": True, "done": ["order_emails"]}
    async with factory.sessionmaker() as session:
        names = await session.scalar(
            select(func.count()).where(OrderPosition.attendee_name_cached.is_not(None))
        )
        emails = await session.scalar(select(func.count()).where(Order.email.is_not(None)))
    assert (names, emails) == (3, 0)  # the first shredder's transaction stands, not the second's
    assert (await client.get(status, headers=auth(world.admin))).status_code == 409

    # The next run skips what is done (the changed attendee data is no "change after export").
    await sh.set_job(app, shred_uuid, run_after=utcnow())
    job = await sh.run_job(app, shred_uuid)
    assert job.status == "finished", job.message
    async with factory.sessionmaker() as session:
        names = await session.scalar(
            select(func.count()).where(OrderPosition.attendee_name_cached.is_not(None))
        )
    assert names == 0
    assert (await client.get(status, headers=auth(world.admin))).status_code == 200

    # A run after the export was deleted (a worker died before recording the end) finishes too.
    await sh.set_job(app, shred_uuid, status="waiting", run_after=utcnow())
    job = await sh.run_job(app, shred_uuid)
    assert job.status == "finished", job.message


async def test_concurrent_requests_start_one_shred(client, world, factory, monkeypatch):
    """On PostgreSQL the requests run side by side: all of them pass their checks and meet
    before inserting, so only the insert itself can keep a second shred out (a
    check-then-insert fails here). On SQLite write transactions run one after the other."""
    app = client._transport.app
    _, links = await _exported(client, app, world, factory, ["phone_numbers"])
    insert = service.insert_shred
    arrived = []
    everyone = asyncio.Event()

    async def together(session, values):
        arrived.append(values["uuid"])
        if len(arrived) == 6 or app.state.db.is_sqlite:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), 10)
        return await insert(session, values)

    monkeypatch.setattr(service, "insert_shred", together)
    answers = await asyncio.gather(
        *(client.post(sh.path_of(links["shred"]), headers=auth(world.admin)) for _ in range(6))
    )
    codes = sorted(a.status_code for a in answers)
    assert codes == [202, 409, 409, 409, 409, 409], [a.text for a in answers]
    assert len(arrived) == 6 and len(set(arrived)) == 1
    assert all(a.json()["status"] == "waiting" for a in answers if a.status_code == 409)
    async with factory.sessionmaker() as session:
        shreds = await session.scalar(
            select(func.count()).select_from(Job).where(Job.kind == "shred.run")
        )
    assert shreds == 1
