"""POST E/ticketpdfrenderer/render_batch/: one combined PDF, a page per part in request order;
400 naming the bad part; permissions; a layout that cannot be drawn fails only its own job."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import update

from admit.models import OrderPosition, Team
from tests.factories import World, auth
from tests.tickets import helpers as h

RENDER = "ticketpdfrenderer/render_batch/"


async def render(client, world: World, parts, token: str | None = None):
    return await client.post(
        h.url(world, RENDER), json={"parts": parts}, headers=auth(token or world.admin)
    )


async def download(client, app, world: World, response, token: str | None = None):
    assert response.status_code == 202, response.text
    link = response.json()["download"]
    assert link.startswith("http://testserver" + h.url(world, "ticketpdfrenderer/download/"))
    await h.run_waiting(app)
    return await client.get(link, headers=auth(token or world.admin))


async def test_parts_render_into_one_pdf_in_request_order(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    order, positions = await h.order(factory, world.event, item, h.NAMES)
    background = h.background_pdf()
    await h.layout(app, world.event, h.TEXT_LAYOUT, background=background, default=True)
    wanted = [positions[3], positions[0], positions[2], positions[1], positions[0]]
    response = await render(client, world, [{"orderposition": p.id} for p in wanted])
    pdf = await download(client, app, world, response)
    assert pdf.status_code == 200, pdf.text
    assert pdf.headers["content-type"] == "application/pdf"
    texts = h.page_texts(pdf.content)
    assert len(texts) == len(wanted)
    for number, position in enumerate(wanted):
        assert position.attendee_name_cached in texts[number]
        assert order.code in texts[number]
        assert h.qr_codes(pdf.content, number) == [position.secret]
    assert h.streams_with(pdf.content, h.content_of(background)) == 1
    job = (await h.jobs(app, "tickets.render_batch"))[0]
    assert job.status == "finished" and job.message == "5 ticket(s) rendered."


async def test_overrides_choose_the_layout(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    _, (position,) = await h.order(factory, world.event, item, ["Ada"])
    free = {"content": "other", "fontsize": 12}
    await h.layout(app, world.event, [h.text_element(text="DEFAULT-LAYOUT", **free)], default=True)
    box = await h.layout(
        app,
        world.event,
        [h.text_element(text="BOX-LAYOUT", **free)],
        items={item.id: ["box_office"]},
    )
    other = await h.layout(app, world.event, [h.text_element(text="OTHER-LAYOUT", **free)])
    parts = [
        {"orderposition": position.id},
        {"orderposition": position.id, "override_channel": "box_office"},
        {"orderposition": position.id, "override_layout": other.id},
        {"orderposition": position.id, "override_channel": "resellers"},
    ]
    pdf = await download(client, app, world, await render(client, world, parts))
    texts = h.page_texts(pdf.content)
    assert ["DEFAULT-LAYOUT" in texts[0], "BOX-LAYOUT" in texts[1]] == [True, True]
    assert "OTHER-LAYOUT" in texts[2] and "DEFAULT-LAYOUT" in texts[3]
    assert box.id != other.id


async def test_without_any_layout_the_built_in_one_prints(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event, "Day pass")
    order, (position,) = await h.order(factory, world.event, item, ["Дмитрий"])
    pdf = await download(
        client, app, world, await render(client, world, [{"orderposition": position.id}])
    )
    text = h.page_texts(pdf.content)[0]
    for expected in ("Summit", "Дмитрий", "Day pass", "EUR 23.00", order.code):
        assert expected in text
    assert h.qr_codes(pdf.content) == [position.secret]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({}, {"parts": ["This field is required."]}),
        ({"parts": "x"}, {"parts": ['Expected a list of items but got type "str".']}),
        ({"parts": None}, {"parts": ['Expected a list of items but got type "null".']}),
        ({"parts": []}, {"parts": ["This list may not be empty."]}),
        ({"parts": [{"orderposition": 1}] * 1001},
         {"parts": ["Ensure this field has no more than 1000 elements."]}),
    ],
)  # fmt: skip
async def test_bad_part_lists_are_400(client, world: World, body, expected):
    response = await client.post(h.url(world, RENDER), json=body, headers=auth(world.admin))
    assert response.status_code == 400, response.text
    assert response.json() == expected


async def test_each_bad_part_is_named(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    _, (good, canceled) = await h.order(factory, world.event, item, ["A", "B"])
    async with factory.sessionmaker() as session:
        await session.execute(
            update(OrderPosition).where(OrderPosition.id == canceled.id).values(canceled=True)
        )
        await session.commit()
    foreign_item = await h.ticket_item(factory, world.other_event)
    _, (foreign,) = await h.order(factory, world.other_event, foreign_item, ["C"])
    foreign_layout = await h.layout(app, world.other_event, h.TEXT_LAYOUT)
    parts = [
        {"orderposition": good.id},
        {},
        {"orderposition": 999_999},
        {"orderposition": foreign.id},
        {"orderposition": canceled.id},
        {"orderposition": good.id, "override_layout": foreign_layout.id},
        {"orderposition": good.id, "override_channel": "moon"},
        {"orderposition": "abc"},
        {"orderposition": True},
        "not an object",
        {"orderposition": 2**40},
    ]
    response = await render(client, world, parts)
    assert response.status_code == 400, response.text
    errors = response.json()["parts"]
    assert len(errors) == len(parts)
    assert errors[0] == {}
    assert errors[1] == {"orderposition": ["This field is required."]}
    assert errors[2] == {"orderposition": ['Invalid pk "999999" - object does not exist.']}
    assert errors[3] == {"orderposition": [f'Invalid pk "{foreign.id}" - object does not exist.']}
    assert errors[4] == {"orderposition": [f'Invalid pk "{canceled.id}" - object does not exist.']}
    assert errors[5] == {
        "override_layout": [f'Invalid pk "{foreign_layout.id}" - object does not exist.']
    }
    assert errors[6] == {"override_channel": ['"moon" is not a valid choice.']}
    assert errors[7] == {"orderposition": ["A valid integer is required."]}
    assert list(errors[8]) == ["orderposition"]
    assert list(errors[9]) == ["non_field_errors"]
    assert list(errors[10]) == ["orderposition"]
    assert await h.jobs(app) == []


async def test_permissions_and_tenancy(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    _, (position,) = await h.order(factory, world.event, item, ["Ada"])
    parts = [{"orderposition": position.id}]
    assert (await render(client, world, parts, world.nobody)).status_code == 403
    assert (await render(client, world, parts, world.outsider)).status_code == 403
    response = await client.post(h.url(world, RENDER), json={"parts": parts})
    assert response.status_code == 401
    reader = await factory.token(
        await factory.team(world.org, event_permissions=["event.orders:read"])
    )
    response = await render(client, world, parts, reader)
    link = response.json()["download"]
    await h.run_waiting(app)
    # Only the caller who asked gets the file.
    assert (await client.get(link, headers=auth(world.admin))).status_code == 404
    assert (await client.get(link, headers=auth(reader))).status_code == 200
    assert (await client.get(link + "x/", headers=auth(reader))).status_code == 404
    wrong = link.rstrip("/").rsplit("/", 1)[0] + "/wrongsecret/"
    assert (await client.get(wrong, headers=auth(reader))).status_code == 404


async def test_a_waiting_job_answers_409(client, world: World, factory):
    item = await h.ticket_item(factory, world.event)
    _, (position,) = await h.order(factory, world.event, item, ["Ada"])
    response = await render(client, world, [{"orderposition": position.id}])
    pending = await client.get(response.json()["download"], headers=auth(world.admin))
    assert pending.status_code == 409
    assert pending.json() == {"status": "waiting", "percentage": None}
    assert pending.headers["retry-after"] == "1"


async def test_a_broken_layout_fails_its_job_and_no_other(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    _, (position,) = await h.order(factory, world.event, item, ["Ada"])
    broken = await h.layout(app, world.event, [{"type": "textarea", "left": "x"}], name="Broken")
    bad_background = await h.layout(
        app, world.event, h.TEXT_LAYOUT, background=b"%PDF-1.7 garbage", name="Bad background"
    )
    fine = await h.layout(app, world.event, h.TEXT_LAYOUT, name="Fine")
    links = []
    for layout in (broken, bad_background, fine):
        response = await render(
            client, world, [{"orderposition": position.id, "override_layout": layout.id}]
        )
        assert response.status_code == 202, response.text
        links.append(response.json()["download"])
        await h.run_waiting(app)  # a caller has at most two batches waiting or running
    failed = await client.get(links[0], headers=auth(world.admin))
    assert failed.status_code == 410
    body = failed.json()
    assert body["status"] == "failed"
    assert f'"Broken" (id {broken.id}) is not valid' in body["message"]
    assert "Element 0" in body["message"]
    other = await client.get(links[1], headers=auth(world.admin))
    assert other.status_code == 410 and "background PDF cannot be read" in other.json()["message"]
    ok = await client.get(links[2], headers=auth(world.admin))
    assert ok.status_code == 200 and h.qr_codes(ok.content) == [position.secret]
    assert [j.attempts for j in await h.jobs(app)] == [1, 1, 1]  # failed for good, no retry


async def test_a_token_that_lost_its_permission_gets_a_failed_job(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    _, (position,) = await h.order(factory, world.event, item, ["Ada"])
    team = await factory.team(world.org, event_permissions=["event.orders:read"])
    token = await factory.token(team)
    response = await render(client, world, [{"orderposition": position.id}], token)
    assert response.status_code == 202
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Team).where(Team.id == team.id).values(limit_event_permissions=[])
        )
        await session.commit()
    await h.run_waiting(app)
    result = await client.get(response.json()["download"], headers=auth(token))
    # The token can no longer read the event at all: its own download is refused too.
    assert result.status_code in (403, 410)
    job = (await h.jobs(app))[0]
    assert job.status == "failed" and "no longer have permission" in job.message


async def test_the_job_runs_in_the_embedded_engine(client, world: World, factory, background):
    item = await h.ticket_item(factory, world.event)
    _, positions = await h.order(factory, world.event, item, ["A", "B", "C"])
    response = await render(client, world, [{"orderposition": p.id} for p in positions])
    await background.engine.broker.wait_all()
    for _ in range(100):
        result = await client.get(response.json()["download"], headers=auth(world.admin))
        if result.status_code != 409:
            break
        await asyncio.sleep(0.05)
    assert result.status_code == 200
    assert len(h.pdf_reader(result.content).pages) == 3
