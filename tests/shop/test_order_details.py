"""Changing attendee names and answers on the order page: checked as at checkout (required
names and questions, dependent questions, the answer's type as the API checks it), sentences
at the fields with the input kept, the change recorded as the API's position PATCH records it;
refused (page and POST) after ``last_order_modification_date`` and after a check-in."""

from __future__ import annotations

import re

from sqlalchemy import select

from admit.models import Answer, Event, OrderPosition
from admit.models.checkin import Checkin, CheckinList, Notification
from tests.factories import auth
from tests.oauth.helpers import csrf
from tests.shop import helpers as h
from tests.shop.test_dependent_questions import _questions

SETTINGS = "/api/v1/organizers/{org}/events/{event}/settings/"


async def _ordered(client, world, factory):
    """A pending order of one ticket bought on the pages with a name and a meal; the order
    page's path, the form's field prefix and the questions."""
    shop = await h.setup(factory, world, attendee_names_required=True)
    guest, name, meal, options, diet = await _questions(factory, shop)
    age = await h.question(factory, shop.event, shop.ticket, "Age", type="N", identifier="AGE")
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = csrf((await client.get(front)).text)
    await client.post(f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.ticket.id}": "1"})
    form = (await client.get(f"{front}checkout/")).text
    pid = re.search(rf'name="q_(\d+)_{name.id}"', form).group(1)  # type: ignore[union-attr]
    r = await h.checkout_form(
        client,
        front,
        token,
        **{f"name_{pid}": "Ada Lovelace", f"q_{pid}_{meal.id}": str(options[0])},
    )
    assert r.status_code == 303, r.text
    page = r.headers["location"]
    async with factory.sessionmaker() as session:
        position = await session.scalar(select(OrderPosition))
    return shop, page, token, position.id, (guest, name, meal, options, diet, age)


async def _answers(factory, position_id: int) -> dict[int, str]:
    async with factory.sessionmaker() as session:
        rows = await session.scalars(select(Answer).where(Answer.orderposition_id == position_id))
        return {a.question_id: a.answer for a in rows}


async def test_the_buyer_changes_names_and_answers_checked_as_at_checkout(client, world, factory):
    _shop, page, token, pid, (guest, name, meal, (meat, veg, _other), diet, age) = await _ordered(
        client, world, factory
    )
    text = (await client.get(page)).text
    assert "Attendee details and answers" in text and f'action="{page}details"' in text
    assert f'name="name_{pid}" autocomplete="name" required value="Ada Lovelace"' in text
    assert f'<option value="{meat}" selected>' in text
    f = f"q_{pid}_"
    # The name is required; a shown dependent question is required; a number must be one.
    r = await client.post(
        f"{page}details",
        data={
            "csrf_token": token,
            f"name_{pid}": "",
            f"{f}{guest.id}": "True",
            f"{f}{meal.id}": str(veg),
            f"{f}{age.id}": "old",
        },
    )
    assert r.status_code == 400
    assert f'<p class="error" id="name_{pid}-error">This field is required.</p>' in r.text
    assert f'<p class="error" id="{f}{name.id}-error">This field is required.</p>' in r.text
    assert f'<p class="error" id="{f}{diet.id}-error">This field is required.</p>' in r.text
    assert f'id="{f}{age.id}-error">A valid number is required.</p>' in r.text
    assert 'value="old"' in r.text and f'<option value="{veg}" selected>' in r.text  # kept
    assert f'id="{f}{guest.id}" name="{f}{guest.id}" value="True" checked' in r.text
    async with factory.sessionmaker() as session:
        position = await session.get(OrderPosition, pid)
        assert position.attendee_name_cached == "Ada Lovelace"  # nothing written
    assert (await _answers(factory, pid))[meal.id] == "Meat"
    # A hidden question's answer is dropped; the valid form is written.
    r = await client.post(
        f"{page}details",
        data={
            "csrf_token": token,
            f"name_{pid}": "Grace Hopper",
            f"{f}{name.id}": "Not kept (no guest)",
            f"{f}{meal.id}": str(veg),
            f"{f}{diet.id}": "Vegan",
            f"{f}{age.id}": "42",
        },
    )
    assert r.status_code == 303, r.text
    text = (await client.get(page)).text
    assert "Your changes have been saved." in text and "Grace Hopper" in text
    answers = await _answers(factory, pid)
    assert answers == {guest.id: "False", meal.id: "Vegetarian", diet.id: "Vegan", age.id: "42"}
    async with factory.sessionmaker() as session:
        position = await session.get(OrderPosition, pid)
        assert position.attendee_name_cached == "Grace Hopper"
        actions = list(await session.scalars(select(Notification.action)))
    assert actions.count("service.event.order.modified") == 1
    # The API reads what the buyer wrote.
    r = await client.get(
        f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/orderpositions/{pid}/",
        headers=auth(world.admin),
    )
    assert r.json()["attendee_name"] == "Grace Hopper"
    # No CSRF token: refused; a wrong secret: 404.
    assert (await client.post(f"{page}details", data={f"name_{pid}": "X"})).status_code == 403
    wrong = page.rstrip("/").rsplit("/", 1)[0] + "/" + "x" * 16 + "/"
    r = await client.post(f"{wrong}details", data={"csrf_token": token, f"name_{pid}": "X"})
    assert r.status_code == 404


async def test_after_the_deadline_the_form_is_gone_and_a_post_refused(client, world, factory):
    _shop, page, token, pid, _ = await _ordered(client, world, factory)
    url = SETTINGS.format(org=world.org.slug, event=world.event.slug)
    r = await client.patch(
        url, json={"last_order_modification_date": "soon"}, headers=auth(world.admin)
    )
    assert r.status_code == 400 and "last_order_modification_date" in r.json()
    future = "2999-01-01T10:00:00Z"
    r = await client.patch(
        url, json={"last_order_modification_date": future}, headers=auth(world.admin)
    )
    assert r.status_code == 200, r.text
    assert r.json()["last_order_modification_date"] == "2999-01-01T10:00:00+00:00"
    assert r.json()["allow_modifications_after_checkin"] is False
    text = (await client.get(page)).text
    assert "You can change these details until 2999-01-01 10:00 UTC." in text
    r = await client.patch(
        url,
        json={"last_order_modification_date": "2020-05-01T12:00:00Z"},
        headers=auth(world.admin),
    )
    assert r.status_code == 200
    text = (await client.get(page)).text
    assert "Changes were possible until 2020-05-01 12:00 UTC; that date has passed." in text
    assert f'action="{page}details"' not in text
    r = await client.post(f"{page}details", data={"csrf_token": token, f"name_{pid}": "Late"})
    assert r.status_code == 400 and "that date has passed" in r.text
    async with factory.sessionmaker() as session:
        assert (await session.get(OrderPosition, pid)).attendee_name_cached == "Ada Lovelace"


async def test_a_checked_in_ticket_is_not_changed_unless_the_event_allows_it(
    client, world, factory
):
    _shop, page, token, pid, _ = await _ordered(client, world, factory)
    async with factory.sessionmaker() as session:
        listed = CheckinList(event_id=world.event.id, name="Entrance")
        session.add(listed)
        await session.flush()
        session.add(Checkin(event_id=world.event.id, position_id=pid, list_id=listed.id, seq=1))
        await session.commit()
    text = (await client.get(page)).text
    assert "it can no longer be changed here" in text and f'action="{page}details"' not in text
    r = await client.post(f"{page}details", data={"csrf_token": token, f"name_{pid}": "Bob B"})
    assert r.status_code == 400
    url = SETTINGS.format(org=world.org.slug, event=world.event.slug)
    r = await client.patch(
        url, json={"allow_modifications_after_checkin": True}, headers=auth(world.admin)
    )
    assert r.status_code == 200
    r = await client.post(f"{page}details", data={"csrf_token": token, f"name_{pid}": "Bob B"})
    assert r.status_code == 303
    async with factory.sessionmaker() as session:
        assert (await session.get(OrderPosition, pid)).attendee_name_cached == "Bob B"
        assert (await session.get(Event, world.event.id)).settings[
            "allow_modifications_after_checkin"
        ] is True
