"""Every input rule of cart position creation answers 400 keyed by the offending field."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.carts import helpers as h


@pytest.fixture
async def ticket(world, factory):
    obj = await h.item(factory, world.event)
    await h.quota(factory, world.event, 10, [obj])
    return obj


def base(ticket, **kw):
    return {"item": ticket.id, "price": "10.00", **kw}


async def test_nothing_is_written_on_error(client, world, factory, ticket):
    response = await h.post(client, world, base(ticket, cart_id="nope"))
    h.errors(response, "cart_id")
    assert await h.cart_rows(factory) == 0


@pytest.mark.parametrize(
    ("extra", "field", "message"),
    [
        ({"cart_id": "abc"}, "cart_id", "Cart ID should end in @api or be empty."),
        ({"cart_id": "x" * 300 + "@api"}, "cart_id", None),
        ({"price": None}, "price", "This field may not be null."),
        ({"price": "abc"}, "price", "A valid number is required."),
        ({"price": "1.234"}, "price", None),
        ({"item": True}, "item", None),
        ({"attendee_email": "not-an-email"}, "attendee_email", "Enter a valid email address."),
        ({"attendee_name_parts": "x"}, "attendee_name_parts", None),
        ({"attendee_name_parts": {"given_name": 5}}, "attendee_name_parts", None),
        ({"expires": "tomorrow"}, "expires", None),
        ({"sales_channel": "shop"}, "sales_channel", "Object with identifier=shop does not exist."),
        ({"seat": "abc-guid"}, "seat", "The specified seat does not exist."),
        ({"voucher": "SAVE10"}, "voucher", "The specified voucher does not exist."),
        ({"addons": "x"}, "addons", None),
        ({"answers": [{"answer": "x"}]}, "answers", None),
    ],
)
async def test_field_rules(client, world, ticket, extra, field, message):
    body = h.errors(await h.post(client, world, base(ticket, **extra)), field)
    if message:
        assert body[field] == [message]


async def test_missing_required_fields(client, world):
    body = h.errors(await h.post(client, world, {}), "item", "price")
    assert body == {"item": ["This field is required."], "price": ["This field is required."]}


async def test_body_must_be_an_object(client, world):
    response = await h.post(client, world, [1])
    h.errors(response, "non_field_errors")


async def test_item_of_another_event_or_unknown(client, world, factory, ticket):
    foreign = await h.item(factory, world.other_event)
    for pk in (foreign.id, 999999, 2**40):
        body = h.errors(await h.post(client, world, {"item": pk, "price": "1"}), "item")
        assert body["item"] == [f'Invalid pk "{pk}" - object does not exist.']


async def test_inactive_item_may_be_reserved(client, world, factory):
    hidden = await h.item(factory, world.event, active=False)
    await h.quota(factory, world.event, 1, [hidden])
    response = await h.post(client, world, {"item": hidden.id, "price": "1"})
    assert response.status_code == 201, response.text


async def test_variation_rules(client, world, factory, ticket):
    shirt = await h.item(factory, world.event, "Shirt")
    red = await h.variation(factory, shirt, "Red")
    mug = await h.item(factory, world.event, "Mug")
    blue = await h.variation(factory, mug, "Blue")
    foreign = await h.variation(factory, await h.item(factory, world.other_event), "X")
    await h.quota(factory, world.event, 5, [shirt, mug], [red, blue])
    cases = [
        ({"item": shirt.id}, "You should specify a variation for this item."),
        ({"item": shirt.id, "variation": blue.id}, "The specified variation does not belong to"),
        ({"item": ticket.id, "variation": red.id}, "You cannot specify a variation for this item."),
        ({"item": shirt.id, "variation": foreign.id}, f'Invalid pk "{foreign.id}"'),
    ]
    for fields, message in cases:
        body = h.errors(await h.post(client, world, {"price": "1", **fields}), "variation")
        assert body["variation"][0].startswith(message), body
    ok = await h.post(client, world, {"item": shirt.id, "variation": red.id, "price": "1"})
    assert ok.status_code == 201, ok.text


async def test_subevent_rules(client, world, factory, ticket):
    series = await factory.event(world.org, "series", has_subevents=True)
    item = await h.item(factory, series)
    date = await h.subevent(factory, series)
    other_date = await h.subevent(factory, await factory.event(world.org, "s2", has_subevents=True))
    await h.quota(factory, series, 5, [item], subevent_=date)
    body = h.errors(
        await h.post(client, world, {"item": item.id, "price": "1"}, series), "subevent"
    )
    assert body["subevent"] == ["You need to set a subevent."]
    wrong = {"item": item.id, "price": "1", "subevent": other_date.id}
    body = h.errors(await h.post(client, world, wrong, series), "subevent")
    assert body["subevent"] == [f'Invalid pk "{other_date.id}" - object does not exist.']
    body = h.errors(await h.post(client, world, base(ticket, subevent=date.id)), "subevent")
    assert body["subevent"] == ["You cannot set a subevent for this event."]
    ok = await h.post(client, world, {"item": item.id, "price": "1", "subevent": date.id}, series)
    assert ok.status_code == 201, ok.text


async def test_nested_position_inherits_the_parents_date(client, world, factory):
    series = await factory.event(world.org, "series", has_subevents=True)
    ticket, shirt = await h.item(factory, series), await h.item(factory, series, "Shirt")
    date = await h.subevent(factory, series)
    await h.quota(factory, series, 5, [ticket, shirt], subevent_=date)
    body = {"item": ticket.id, "price": "1", "subevent": date.id}
    response = await h.post(
        client, world, {**body, "addons": [{"item": shirt.id, "price": "1"}]}, series
    )
    assert response.status_code == 201, response.text
    assert response.json()["addons"][0]["subevent"] == date.id
    nulled = {**body, "addons": [{"item": shirt.id, "price": "1", "subevent": None}]}
    errors = h.errors(await h.post(client, world, nulled, series), "addons")
    assert errors["addons"] == [{"subevent": ["You need to set a subevent."]}]


async def test_expires_must_be_in_the_future(client, world, ticket):
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)).isoformat()
    body = h.errors(await h.post(client, world, base(ticket, expires=past)), "expires")
    assert body["expires"] == ["The expiry date must be in the future."]


async def test_name_and_parts_together(client, world, ticket):
    request = base(ticket, attendee_name="A", attendee_name_parts={"given_name": "A"})
    body = h.errors(await h.post(client, world, request), "attendee_name")
    assert body["attendee_name"] == [
        "Do not specify attendee_name if you specified attendee_name_parts."
    ]


async def test_nested_errors_keep_their_positions(client, world, factory, ticket):
    request = base(
        ticket,
        addons=[{"item": ticket.id, "price": "1"}, {"item": 999999, "price": "1"}],
        bundled=[{"item": ticket.id}, {"item": ticket.id, "price": "1", "voucher": "X"}],
    )
    # Shape errors come first; once the shapes are right the reference rules are checked.
    body = h.errors(await h.post(client, world, request), "bundled")
    assert body["bundled"] == [{"price": ["This field is required."]}]
    request["bundled"][0]["price"] = "1"
    body = h.errors(await h.post(client, world, request), "addons", "bundled")
    assert body["addons"] == [{}, {"item": ['Invalid pk "999999" - object does not exist.']}]
    assert body["bundled"] == [{}, {"voucher": ["The specified voucher does not exist."]}]
    assert await h.cart_rows(factory) == 0


async def test_answer_question_must_belong_to_event_and_item(client, world, factory, ticket):
    other_item = await h.item(factory, world.event, "Other")
    not_asked = await h.question(factory, world.event, "S", [other_item])
    foreign = await h.question(factory, world.other_event, "S", [])
    answers = [
        {"question": foreign.id, "answer": "x"},
        {"question": not_asked.id, "answer": "x"},
    ]
    body = h.errors(await h.post(client, world, base(ticket, answers=answers)), "answers")
    assert body["answers"] == [
        {"question": [f'Invalid pk "{foreign.id}" - object does not exist.']},
        {"question": ["This question is not asked for the specified product."]},
    ]


@pytest.mark.parametrize(
    ("kind", "answer", "field", "message"),
    [
        ("N", "abc", "answer", "A valid number is required."),
        ("N", "NaN", "answer", "A valid number is required."),
        ("B", "yes", "answer", 'Please specify "true" or "false" for boolean questions.'),
        ("D", "02.01.2030", "answer", None),
        ("H", "25:00", "answer", None),
        ("W", "2030-01-02", "answer", None),
        ("CC", "XX", "answer", '"XX" is not a valid choice.'),
        ("S", "", "answer", "This field may not be blank."),
        ("TEL", "   ", "answer", "This field may not be blank."),
        ("F", "file:abc", "question", "File upload questions are not supported by this API."),
    ],
)
async def test_answer_types(client, world, factory, ticket, kind, answer, field, message):
    question = await h.question(factory, world.event, kind, [ticket])
    answers = [{"question": question.id, "answer": answer}]
    body = h.errors(await h.post(client, world, base(ticket, answers=answers)), "answers")
    [entry] = body["answers"]
    assert set(entry) == {field}, body
    if message:
        assert entry[field] == [message]


async def test_answer_bounds(client, world, factory, ticket):
    number = await h.question(factory, world.event, "N", [ticket], valid_number_max=10)
    text = await h.question(factory, world.event, "S", [ticket], valid_string_length_max=3)
    day = await h.question(factory, world.event, "D", [ticket], valid_date_min=dt.date(2030, 1, 1))
    answers = [
        {"question": number.id, "answer": "11"},
        {"question": text.id, "answer": "abcd"},
        {"question": day.id, "answer": "2029-12-31"},
    ]
    body = h.errors(await h.post(client, world, base(ticket, answers=answers)), "answers")
    assert body["answers"] == [
        {"answer": ["Ensure this value is less than or equal to 10."]},
        {"answer": ["Ensure this field has no more than 3 characters."]},
        {"answer": ["Please enter a date no earlier than 2030-01-01."]},
    ]


async def test_choice_answers(client, world, factory, ticket):
    single = await h.question(factory, world.event, "C", [ticket], ["a", "b"])
    multi = await h.question(factory, world.event, "M", [ticket], ["x", "y"])
    text = await h.question(factory, world.event, "S", [ticket])
    a, b = await h.option_ids(factory, single)
    x, _y = await h.option_ids(factory, multi)
    cases = [
        ({"question": single.id, "options": []}, "You need to specify options"),
        ({"question": single.id, "options": [a, b]}, "You can specify at most one option"),
        ({"question": single.id, "options": [x]}, "The specified option does not belong"),
        ({"question": multi.id, "options": [x, 999999]}, "The specified option does not belong"),
        ({"question": text.id, "answer": "t", "options": [a]}, "You should not specify options"),
    ]
    for answer, message in cases:
        body = h.errors(await h.post(client, world, base(ticket, answers=[answer])), "answers")
        assert body["answers"][0]["options"][0].startswith(message), body


async def test_question_answered_twice(client, world, factory, ticket):
    text = await h.question(factory, world.event, "S", [ticket])
    answers = [{"question": text.id, "answer": "a"}, {"question": text.id, "answer": "b"}]
    body = h.errors(await h.post(client, world, base(ticket, answers=answers)), "answers")
    assert body["answers"] == [{}, {"question": ["This question has already been answered."]}]


async def test_nested_answers_errors(client, world, factory, ticket):
    text = await h.question(factory, world.event, "S", [ticket])
    addon = {"item": ticket.id, "price": "1", "answers": [{"question": text.id, "answer": ""}]}
    body = h.errors(await h.post(client, world, base(ticket, addons=[addon])), "addons")
    assert body["addons"] == [{"answers": [{"answer": ["This field may not be blank."]}]}]
