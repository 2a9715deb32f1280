"""GET E/orders/{code}/download/pdf/ and E/orderpositions/{id}/download/pdf/: 409 while
rendering, then the PDF; one rendering per content; which orders and positions have tickets."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from sqlalchemy import func, select, update

from admit.models import Job, OrderPosition, TicketFile, TicketLayout
from admit.tickets import downloads
from tests.checkin.helpers import addon
from tests.factories import World, auth
from tests.tickets import helpers as h


def position_url(world: World, position_id: int | str) -> str:
    return h.url(world, f"orderpositions/{position_id}/download/pdf/")


def order_url(world: World, code: str) -> str:
    return h.url(world, f"orders/{code}/download/pdf/")


async def fetch(client, app, link: str, token: str):
    """The first answer (409) and, after the render job ran, the second."""
    first = await client.get(link, headers=auth(token))
    await h.run_waiting(app)
    return first, await client.get(link, headers=auth(token))


async def test_a_position_ticket_renders_once_and_is_then_served(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    order, (position,) = await h.order(factory, world.event, item, ["山田太郎"])
    link = position_url(world, position.id)
    first = await client.get(link, headers=auth(world.admin))
    assert first.status_code == 409
    assert first.json() == {"status": "waiting", "percentage": None}
    assert first.headers["retry-after"] == "1"
    again = await client.get(link, headers=auth(world.admin))
    assert again.status_code == 409  # still the same job, not a second one
    assert len(await h.jobs(app, "tickets.render")) == 1
    await h.run_waiting(app)
    ready = await client.get(link, headers=auth(world.admin))
    assert ready.status_code == 200, ready.text
    assert ready.headers["content-type"] == "application/pdf"
    assert f"{order.code}_1.pdf" in ready.headers["content-disposition"]
    texts = h.page_texts(ready.content)
    assert len(texts) == 1 and "山田太郎" in texts[0] and order.code in texts[0]
    assert h.qr_codes(ready.content) == [position.secret]
    # Served from the cache: no new job, the same file.
    cached = await client.get(link, headers=auth(world.admin))
    assert cached.status_code == 200 and cached.content == ready.content
    assert len(await h.jobs(app, "tickets.render")) == 1


async def test_a_change_renders_anew(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    _, (position,) = await h.order(factory, world.event, item, ["Ada Lovelace"])
    link = position_url(world, position.id)
    _, first = await fetch(client, app, link, world.admin)
    assert "Ada Lovelace" in h.page_texts(first.content)[0]
    response = await client.patch(
        h.url(world, f"orderpositions/{position.id}/"),
        json={"attendee_name_parts": {"_legacy": "Grace Hopper"}},
        headers=auth(world.admin),
    )
    assert response.status_code == 200, response.text
    pending, second = await fetch(client, app, link, world.admin)
    assert pending.status_code == 409 and second.status_code == 200
    assert "Grace Hopper" in h.page_texts(second.content)[0]
    # A new layout is a change too.
    await h.layout(app, world.event, [h.text_element("other", text="NEW-LAYOUT")], default=True)
    pending, third = await fetch(client, app, link, world.admin)
    assert pending.status_code == 409 and "NEW-LAYOUT" in h.page_texts(third.content)[0]
    assert len(await h.jobs(app, "tickets.render")) == 3


async def test_an_order_download_holds_its_ticket_generating_positions(
    client, world: World, factory
):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    no_ticket = await h.ticket_item(factory, world.event, "Donation", generate_tickets=False)
    extra = await h.ticket_item(factory, world.event, "Parking")
    order, positions = await h.order(factory, world.event, item, h.NAMES)
    async with factory.sessionmaker() as session:
        await session.execute(
            update(OrderPosition)
            .where(OrderPosition.id == positions[1].id)
            .values(item_id=no_ticket.id)
        )
        await session.execute(
            update(OrderPosition).where(OrderPosition.id == positions[2].id).values(canceled=True)
        )
        await session.commit()
    await addon(factory, order, positions[0], extra, 5)
    await h.layout(app, world.event, [*h.TEXT_LAYOUT, h.text_element("addons", 100)], default=True)
    pending, ready = await fetch(client, app, order_url(world, order.code), world.admin)
    assert pending.status_code == 409 and ready.status_code == 200
    texts = h.page_texts(ready.content)
    assert len(texts) == 2  # positions 1 and 4; the add-on is printed on its main ticket
    assert h.NAMES[0] in texts[0] and "Parking" in texts[0]
    assert h.NAMES[3] in texts[1]
    assert [h.qr_codes(ready.content, n) for n in range(2)] == [
        [positions[0].secret],
        [positions[3].secret],
    ]


async def test_404_where_there_is_no_ticket(client, world: World, factory):
    item = await h.ticket_item(factory, world.event)
    no_ticket = await h.ticket_item(factory, world.event, "Donation", generate_tickets=False)
    _, (plain,) = await h.order(factory, world.event, no_ticket, ["A"])
    pending, (pending_position,) = await h.order(factory, world.event, item, ["B"], status="n")
    canceled, (canceled_position,) = await h.order(factory, world.event, item, ["C"], status="c")
    expired, _ = await h.order(factory, world.event, item, ["D"], status="e")
    approval, _ = await h.order(
        factory, world.event, item, ["E"], status="n", require_approval=True
    )
    _, (gone,) = await h.order(factory, world.event, item, ["F"], position={"canceled": True})
    foreign_item = await h.ticket_item(factory, world.other_event)
    _, (foreign,) = await h.order(factory, world.other_event, foreign_item, ["G"])
    cases = {
        position_url(world, plain.id): "does not generate tickets",
        position_url(world, pending_position.id): "not paid",
        order_url(world, pending.code): "not paid",
        position_url(world, canceled_position.id): "canceled",
        order_url(world, canceled.code): "canceled",
        order_url(world, expired.code): "expired",
        order_url(world, approval.code): "approved",
        position_url(world, gone.id): "canceled",
        position_url(world, foreign.id): "Not found.",
        position_url(world, 999_999): "Not found.",
        order_url(world, "NOPE1"): "Not found.",
        position_url(world, "abc"): "Not found.",
        position_url(world, "0"): "Not found.",
        order_url(world, "X" * 40): "Not found.",
    }
    for link, reason in cases.items():
        response = await client.get(link, headers=auth(world.admin))
        assert response.status_code == 404, (link, response.text)
        assert reason in response.json()["detail"], (link, response.json())
    assert await h.jobs(client._transport.app) == []


async def test_a_pending_order_valid_if_pending_has_tickets(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    order, (position,) = await h.order(
        factory, world.event, item, ["Ada"], status="n", valid_if_pending=True
    )
    pending, ready = await fetch(client, app, order_url(world, order.code), world.admin)
    assert pending.status_code == 409 and ready.status_code == 200
    assert h.qr_codes(ready.content) == [position.secret]


async def test_permissions_and_tenancy(client, world: World, factory):
    item = await h.ticket_item(factory, world.event)
    order, (position,) = await h.order(factory, world.event, item, ["Ada"])
    for link in (position_url(world, position.id), order_url(world, order.code)):
        assert (await client.get(link)).status_code == 401
        assert (await client.get(link, headers=auth(world.nobody))).status_code == 403
        assert (await client.get(link, headers=auth(world.outsider))).status_code == 403
    other = h.url(world, f"orderpositions/{position.id}/download/pdf/", world.other_event)
    assert (await client.get(other, headers=auth(world.outsider))).status_code == 403


async def test_a_failed_rendering_is_410_and_retried_later(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    _, (position,) = await h.order(factory, world.event, item, ["Ada"])
    broken = await h.layout(app, world.event, [{"type": "barcodearea"}], default=True, name="Bad")
    link = position_url(world, position.id)
    pending, failed = await fetch(client, app, link, world.admin)
    assert pending.status_code == 409 and failed.status_code == 410
    assert failed.json()["status"] == "failed" and '"Bad"' in failed.json()["message"]
    # The layout is fixed behind the API's back (same content would give the same
    # fingerprint): after a while the failure is rendered again.
    async with factory.sessionmaker() as session:
        await session.execute(
            update(TicketLayout).where(TicketLayout.id == broken.id).values(layout=h.TEXT_LAYOUT)
        )
        await session.commit()
    pending, ready = await fetch(client, app, link, world.admin)
    assert pending.status_code == 409 and ready.status_code == 200  # a new fingerprint
    # Same content, failed long ago: rendered again instead of failing forever.
    async with factory.sessionmaker() as session:
        await session.execute(
            update(TicketLayout).where(TicketLayout.id == broken.id).values(layout=[{"type": "x"}])
        )
        await session.commit()
    _, failed = await fetch(client, app, link, world.admin)
    assert failed.status_code == 410
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Job)
            .where(Job.status == "failed")
            .values(finished=dt.datetime(2020, 1, 1, tzinfo=dt.UTC))
        )
        await session.commit()
    again = await client.get(link, headers=auth(world.admin))
    assert again.status_code == 409
    async with factory.sessionmaker() as session:
        files = await session.scalar(select(func.count()).select_from(TicketFile))
    assert files == 3  # one row per fingerprint; the failed one was replaced


async def test_an_expired_or_lost_file_is_rendered_again(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    _, (position,) = await h.order(factory, world.event, item, ["Ada"])
    link = position_url(world, position.id)
    _, ready = await fetch(client, app, link, world.admin)
    assert ready.status_code == 200
    job = (await h.jobs(app, "tickets.render"))[0]
    await app.state.background.store.delete(job.result_key)
    pending, ready = await fetch(client, app, link, world.admin)
    assert pending.status_code == 409 and ready.status_code == 200
    async with factory.sessionmaker() as session:
        await session.execute(update(Job).values(expires=dt.datetime(2020, 1, 1, tzinfo=dt.UTC)))
        await session.commit()
    assert (await client.get(link, headers=auth(world.admin))).status_code == 409
    assert len(await h.jobs(app, "tickets.render")) == 3


async def test_concurrent_first_downloads_make_one_job(
    client, world: World, factory, database_url, monkeypatch
):
    if not database_url.startswith("postgresql"):
        pytest.skip("concurrent writers only overlap on PostgreSQL (SQLite serialises them)")
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    order, positions = await h.order(factory, world.event, item, ["A", "B"])
    links = [order_url(world, order.code), position_url(world, positions[0].id)]
    for link in links:
        statuses = await asyncio.gather(
            *(client.get(link, headers=auth(world.admin)) for _ in range(12))
        )
        assert {r.status_code for r in statuses} == {409}
    render_jobs = await h.jobs(app, "tickets.render")
    assert len(render_jobs) == 2
    async with factory.sessionmaker() as session:
        targets = (await session.execute(select(TicketFile.target))).scalars().all()
    assert sorted(targets) == sorted([f"order:{order.id}", f"position:{positions[0].id}"])
    await h.run_waiting(app)
    statuses = await asyncio.gather(
        *(client.get(links[0], headers=auth(world.admin)) for _ in range(5))
    )
    assert {r.status_code for r in statuses} == {200}
    assert len(await h.jobs(app, "tickets.render")) == 2

    # The worst case, forced: all requests look before any has written, then all insert.
    barrier = asyncio.Barrier(12)
    looked = []
    original = downloads._cached
    starts = []
    original_start = downloads._start

    async def blind(*args, **kw):
        if len(looked) < 12:
            looked.append(1)
            await barrier.wait()
            return None
        return await original(*args, **kw)

    async def start(*args, **kw):
        started = await original_start(*args, **kw)
        starts.append(started)
        return started

    monkeypatch.setattr(downloads, "_cached", blind)
    monkeypatch.setattr(downloads, "_start", start)
    link = position_url(world, positions[1].id)
    statuses = await asyncio.gather(
        *(client.get(link, headers=auth(world.admin)) for _ in range(12))
    )
    assert {r.status_code for r in statuses} == {409}
    assert sorted(starts) == [False] * 11 + [True]
    assert len(await h.jobs(app, "tickets.render")) == 3
    async with factory.sessionmaker() as session:
        count = select(func.count()).select_from(TicketFile)
        assert (
            await session.scalar(count.where(TicketFile.target == f"position:{positions[1].id}"))
            == 1
        )
