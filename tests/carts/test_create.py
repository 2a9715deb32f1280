"""Creating cart positions and reading them back: fields, defaults, add-ons, bundles, answers."""

from __future__ import annotations

import datetime as dt

from tests.carts import helpers as h
from tests.factories import auth


async def test_round_trip_with_defaults(client, world, factory):
    ticket = await h.item(factory, world.event)
    await h.quota(factory, world.event, 10, [ticket])
    before = dt.datetime.now(dt.UTC)
    response = await h.post(client, world, {"item": ticket.id, "price": "23.00"})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["cart_id"].endswith("@api") and len(body["cart_id"]) > 20
    assert body["item"] == ticket.id
    assert body["variation"] is None
    assert body["price"] == "23.00"
    assert body["attendee_name"] is None
    assert body["attendee_name_parts"] == {}
    assert body["attendee_email"] is None
    assert body["voucher"] is None
    assert body["addon_to"] is None
    assert body["is_bundled"] is False
    assert body["subevent"] is None
    assert body["includes_tax"] is True
    assert body["answers"] == []
    assert body["seat"] is None
    assert body["addons"] == [] and body["bundled"] == []
    expires = dt.datetime.fromisoformat(body["expires"])
    created = dt.datetime.fromisoformat(body["datetime"])
    assert before <= created <= dt.datetime.now(dt.UTC)
    assert dt.timedelta(minutes=29) < expires - before <= dt.timedelta(minutes=31)

    detail = await client.get(h.url(world, suffix=f"{body['id']}/"), headers=auth(world.admin))
    assert detail.status_code == 200
    assert detail.json() == body


async def test_given_fields_are_stored(client, world, factory):
    ticket = await h.item(factory, world.event)
    await h.quota(factory, world.event, 10, [ticket])
    expires = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=2)).replace(microsecond=0)
    response = await h.post(
        client,
        world,
        {
            "cart_id": "mycart@api",
            "item": ticket.id,
            "price": "12.5",
            "attendee_name_parts": {"given_name": "Ada", "family_name": "Lovelace"},
            "attendee_email": "ada@example.org",
            "expires": expires.isoformat(),
            "includes_tax": False,
            "sales_channel": "box_office",
        },
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["cart_id"] == "mycart@api"
    assert body["price"] == "12.50"
    assert body["attendee_name"] == "Ada Lovelace"
    assert body["attendee_name_parts"] == {"given_name": "Ada", "family_name": "Lovelace"}
    assert body["attendee_email"] == "ada@example.org"
    assert dt.datetime.fromisoformat(body["expires"]) == expires
    assert body["includes_tax"] is False
    detail = await client.get(h.url(world, suffix=f"{body['id']}/"), headers=auth(world.admin))
    assert detail.json() == body


async def test_attendee_name_alone_is_stored_as_legacy_part(client, world, factory):
    ticket = await h.item(factory, world.event)
    await h.quota(factory, world.event, 10, [ticket])
    response = await h.post(
        client, world, {"item": ticket.id, "price": "1.00", "attendee_name": "Peter Pan"}
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["attendee_name"] == "Peter Pan"
    assert body["attendee_name_parts"] == {"_legacy": "Peter Pan"}


async def test_variation_and_subevent_are_stored(client, world, factory):
    series = await factory.event(world.org, "series", has_subevents=True)
    shirt = await h.item(factory, series, "Shirt")
    red = await h.variation(factory, shirt, "Red")
    date = await h.subevent(factory, series)
    await h.quota(factory, series, 5, [shirt], [red], date)
    body = {"item": shirt.id, "variation": red.id, "subevent": date.id, "price": "5.00"}
    response = await h.post(client, world, body, series)
    assert response.status_code == 201, response.text
    assert response.json()["variation"] == red.id
    assert response.json()["subevent"] == date.id


async def test_nested_addons_bundled_and_answers_round_trip(client, world, factory):
    ticket = await h.item(factory, world.event, "Ticket")
    shirt = await h.item(factory, world.event, "Shirt")
    drink = await h.item(factory, world.event, "Drink")
    await h.quota(factory, world.event, 10, [ticket, shirt, drink])
    age = await h.question(factory, world.event, "N", [ticket], identifier="AGE")
    size = await h.question(factory, world.event, "C", [shirt], ["s", "m"], identifier="SIZE")
    extras = await h.question(factory, world.event, "M", [drink], ["ice", "lemon"])
    size_ids = await h.option_ids(factory, size)
    extra_ids = await h.option_ids(factory, extras)
    request = {
        "item": ticket.id,
        "price": "23.00",
        "answers": [{"question": age.id, "answer": "42"}],
        "addons": [
            {
                "item": shirt.id,
                "price": "10.00",
                "attendee_name": "Kid",
                "answers": [{"question": size.id, "answer": "", "options": [size_ids[1]]}],
            }
        ],
        "bundled": [
            {
                "item": drink.id,
                "price": "0.00",
                "answers": [{"question": extras.id, "options": extra_ids}],
            }
        ],
    }
    response = await h.post(client, world, request)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["answers"] == [
        {
            "question": age.id,
            "answer": "42",
            "question_identifier": "AGE",
            "options": [],
            "option_identifiers": [],
        }
    ]
    [addon] = body["addons"]
    [bundled] = body["bundled"]
    assert addon["addon_to"] == body["id"] and addon["is_bundled"] is False
    assert bundled["addon_to"] == body["id"] and bundled["is_bundled"] is True
    assert addon["cart_id"] == bundled["cart_id"] == body["cart_id"]
    assert addon["expires"] == body["expires"]
    assert addon["item"] == shirt.id and addon["price"] == "10.00"
    assert addon["attendee_name"] == "Kid"
    assert addon["answers"] == [
        {
            "question": size.id,
            "answer": "M",
            "question_identifier": "SIZE",
            "options": [size_ids[1]],
            "option_identifiers": ["m"],
        }
    ]
    assert bundled["answers"][0]["options"] == extra_ids
    assert bundled["answers"][0]["option_identifiers"] == ["ice", "lemon"]
    assert bundled["answers"][0]["answer"] == "Ice, Lemon"
    assert addon["addons"] == [] and addon["bundled"] == []

    detail = await client.get(h.url(world, suffix=f"{body['id']}/"), headers=auth(world.admin))
    assert detail.json() == body
    child = await client.get(h.url(world, suffix=f"{addon['id']}/"), headers=auth(world.admin))
    assert child.json() == addon
    assert await h.cart_rows(factory) == 3


async def test_answer_values_are_normalised_per_type(client, world, factory):
    ticket = await h.item(factory, world.event)
    await h.quota(factory, world.event, 10, [ticket])
    cases = {
        "B": ("true", "True"),
        "D": ("2030-01-02", "2030-01-02"),
        "H": ("10:30", "10:30:00"),
        "W": ("2030-01-02T10:00:00Z", "2030-01-02T10:00:00+00:00"),
        "CC": ("de", "DE"),
        "TEL": ("+49 30 1234", "+49 30 1234"),
        "S": ("hello", "hello"),
        "T": ("line\nline", "line\nline"),
        "N": ("3.5", "3.5"),
    }
    questions = {k: await h.question(factory, world.event, k, [ticket]) for k in cases}
    answers = [{"question": questions[k].id, "answer": sent} for k, (sent, _) in cases.items()]
    response = await h.post(client, world, {"item": ticket.id, "price": "1", "answers": answers})
    assert response.status_code == 201, response.text
    got = {a["question"]: a["answer"] for a in response.json()["answers"]}
    assert got == {questions[k].id: stored for k, (_, stored) in cases.items()}
    assert await h.answer_rows(factory) == len(cases)
