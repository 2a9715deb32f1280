"""Descriptors, input validation, the refusal rules and permissions of the shredder routes."""

from __future__ import annotations

import datetime as dt

import pytest

from admit.db import utcnow
from admit.models import SubEvent
from tests.factories import assert_field_errors, auth
from tests.shredders import helpers as sh


async def test_descriptors_are_a_paginated_list(client, world):
    answer = await client.get(sh.url(world), headers=auth(world.admin))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["count"] == len(sh.ALL) and body["next"] is None and body["previous"] is None
    identifiers = [d["identifier"] for d in body["results"]]
    assert identifiers == sorted(sh.ALL)
    assert all(set(d) == {"identifier", "verbose_name"} for d in body["results"])
    assert {"identifier": "question_answers", "verbose_name": "Answers to questions"} in (
        body["results"]
    )
    page = (await client.get(sh.url(world, "?page_size=3"), headers=auth(world.admin))).json()
    assert len(page["results"]) == 3
    assert page["next"] == f"http://testserver{sh.url(world)}?page_size=3&page=2"
    past = await client.get(sh.url(world, "?page=4"), headers=auth(world.admin))
    assert past.status_code == 404 and past.json() == {"detail": "Invalid page."}


async def test_every_route_needs_orders_write(client, world, factory):
    reader = await factory.token(
        await factory.team(world.org, event_permissions=["event.orders:read"])
    )
    for token in (world.nobody, reader, world.outsider):
        for method, rest in (
            ("GET", ""),
            ("POST", "export/"),
            ("GET", "download/a/b/"),
            ("POST", "shred/a/b/"),
            ("GET", "status/a/b/"),
        ):
            answer = await client.request(
                method,
                sh.url(world, rest),
                json={"shredders": ["phone_numbers"]},
                headers=auth(token),
            )
            assert answer.status_code == 403, (method, rest, answer.text)
    writer = await factory.token(
        await factory.team(world.org, event_permissions=["event.orders:write"])
    )
    assert (await client.get(sh.url(world), headers=auth(writer))).status_code == 200


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "This field is required."),
        ({"shredders": None}, "This field may not be null."),
        ({"shredders": "order_emails"}, 'Expected a list of items but got type "str".'),
        ({"shredders": []}, "This list may not be empty."),
        ({"shredders": ["nope"]}, '"nope" is not a valid choice.'),
        ({"shredders": [1]}, "Not a valid string."),
        (
            {"shredders": ["order_emails", "order_emails"]},
            '"order_emails" was given more than once.',
        ),
    ],
)
async def test_export_input_is_validated(client, world, factory, body, message):
    await sh.end_event(factory, world.event)
    answer = await client.post(sh.url(world, "export/"), json=body, headers=auth(world.admin))
    assert_field_errors(answer, "shredders")
    assert answer.json() == {"shredders": [message]}


async def test_export_refuses_bodies_that_are_no_object(client, world, factory):
    await sh.end_event(factory, world.event)
    answer = await client.post(
        sh.url(world, "export/"), json=["order_emails"], headers=auth(world.admin)
    )
    assert answer.status_code == 400 and "non_field_errors" in answer.json()
    broken = await client.post(
        sh.url(world, "export/"),
        content=b"{",
        headers={**auth(world.admin), "Content-Type": "application/json"},
    )
    assert broken.status_code == 400 and broken.json()["detail"].startswith("JSON parse error")


async def _export(client, world):
    return await client.post(
        sh.url(world, "export/"), json={"shredders": ["phone_numbers"]}, headers=auth(world.admin)
    )


async def test_refused_while_the_event_is_not_over_or_the_shop_is_live(client, world, factory):
    # The world's event lies in 2030 and is offline.
    answer = await _export(client, world)
    assert answer.status_code == 400
    (message,) = answer.json()["non_field_errors"]
    assert "not over yet" in message and "2030-05-01T10:00:00+00:00" in message
    assert "live" not in message

    await sh.end_event(factory, world.event, live=True)
    answer = await _export(client, world)
    (message,) = answer.json()["non_field_errors"]
    assert message == "The ticket shop is live: take it offline before shredding data."

    future = utcnow() + dt.timedelta(hours=1)
    await sh.end_event(factory, world.event, live=True, date_to=future)
    (message,) = (await _export(client, world)).json()["non_field_errors"]
    assert "not over yet" in message and "live" in message  # every reason

    # date_to decides, not date_from; a past end without date_to is over.
    await sh.end_event(factory, world.event, date_to=None)
    assert (await _export(client, world)).status_code == 202


async def test_a_series_is_over_after_its_last_date(client, world, factory):
    await sh.end_event(factory, world.event)
    now = utcnow()
    async with factory.sessionmaker() as session:
        from sqlalchemy import update

        from admit.models import Event

        await session.execute(
            update(Event).where(Event.id == world.event.id).values(has_subevents=True)
        )
        session.add(
            SubEvent(event_id=world.event.id, name={"en": "1"}, date_from=now - dt.timedelta(10))
        )
        later = SubEvent(
            event_id=world.event.id,
            name={"en": "2"},
            date_from=now - dt.timedelta(days=1),
            date_to=now + dt.timedelta(minutes=5),
        )
        session.add(later)
        await session.commit()
    answer = await _export(client, world)
    assert answer.status_code == 400
    assert "not over yet" in answer.json()["non_field_errors"][0]

    async with factory.sessionmaker() as session:
        row = await session.get(SubEvent, later.id)
        row.date_to = None  # its start is past now: only a date still to come counts
        session.add(
            SubEvent(event_id=world.event.id, name={"en": "3"}, date_from=now + dt.timedelta(2))
        )
        await session.commit()
    assert (await _export(client, world)).status_code == 400

    async with factory.sessionmaker() as session:
        from sqlalchemy import delete

        await session.execute(delete(SubEvent).where(SubEvent.date_from > now))
        await session.commit()
    assert (await _export(client, world)).status_code == 202


async def test_a_series_without_dates_goes_by_its_own(client, world, factory):
    async with factory.sessionmaker() as session:
        from sqlalchemy import update

        from admit.models import Event

        await session.execute(
            update(Event).where(Event.id == world.event.id).values(has_subevents=True)
        )
        await session.commit()
    assert (await _export(client, world)).status_code == 400  # 2030
    await sh.end_event(factory, world.event, has_subevents=True)
    assert (await _export(client, world)).status_code == 202


async def test_other_tenants_events_are_forbidden(client, world, factory):
    await sh.end_event(factory, world.other_event)
    answer = await client.post(
        sh.url(world, "export/", event=world.other_event),
        json={"shredders": ["phone_numbers"]},
        headers=auth(world.admin),
    )
    assert answer.status_code == 403
