"""Questions: round trip, defaults, identifiers, PUT/PATCH, delete, list, ordering, queries."""

from __future__ import annotations

import re

from tests.catalog_questions.helpers import (
    choice,
    create,
    field_errors,
    item,
    question_url,
    questions_url,
    stored_options,
    stored_question,
)
from tests.factories import World, auth

FULL = {
    "question": {"en": "Age", "de": "Alter"},
    "help_text": {"en": "In years"},
    "type": "N",
    "required": True,
    "position": 7,
    "identifier": "age.v1_x-2",
    "ask_during_checkin": True,
    "show_during_checkin": True,
    "hidden": True,
    "print_on_invoice": True,
    "valid_number_min": "0",
    "valid_number_max": "130.5",
}

IDENTIFIER = re.compile(r"^[ABCDEFGHJKLMNPQRSTUVWXYZ3789]{8}$")


async def test_round_trip_field_by_field(client, world: World, factory):
    first = await item(factory, world.event, "A")
    second = await item(factory, world.event, "B")
    body = await create(client, world, **FULL, items=[second.id, first.id, first.id])
    expected = {
        **FULL,
        "items": [first.id, second.id],
        "options": [],
        "dependency_question": None,
        "dependency_values": [],
        "dependency_value": None,
        "valid_number_min": "0.000000",
        "valid_number_max": "130.500000",
        "valid_date_min": None,
        "valid_date_max": None,
        "valid_datetime_min": None,
        "valid_datetime_max": None,
        "valid_string_length_min": None,
        "valid_string_length_max": None,
        "valid_file_portrait": False,
    }
    assert body == {"id": body["id"], **expected}
    fetched = await client.get(question_url(world, body["id"]), headers=auth(world.admin))
    assert fetched.status_code == 200
    assert fetched.json() == body
    stored = await stored_question(factory, body["id"])
    assert stored is not None and stored.event_id == world.event.id


async def test_defaults_and_plain_string_as_english(client, world: World):
    body = await create(client, world, question="Name?")
    assert body["question"] == {"en": "Name?"}
    assert body["help_text"] is None
    assert body["items"] == [] and body["options"] == []
    for flag in (
        "required",
        "ask_during_checkin",
        "show_during_checkin",
        "hidden",
        "print_on_invoice",
        "valid_file_portrait",
    ):
        assert body[flag] is False, flag
    assert body["position"] == 0


async def test_other_bounds_round_trip(client, world: World):
    date_q = await create(
        client, world, type="D", valid_date_min="2030-01-01", valid_date_max="2030-12-31"
    )
    assert (date_q["valid_date_min"], date_q["valid_date_max"]) == ("2030-01-01", "2030-12-31")
    when = await create(
        client,
        world,
        type="W",
        valid_datetime_min="2030-01-01T10:00:00+02:00",
        valid_datetime_max="2030-01-02T10:00:00Z",
    )
    assert when["valid_datetime_min"].startswith("2030-01-01T08:00:00")
    assert when["valid_datetime_max"].startswith("2030-01-02T10:00:00")
    text = await create(client, world, type="T", valid_string_length_max=20)
    assert text["valid_string_length_max"] == 20
    photo = await create(client, world, type="F", valid_file_portrait=True)
    assert photo["valid_file_portrait"] is True


async def test_identifier_is_required(client, world: World):
    """Required, as in the reference (it is not generated): integrations match on it."""
    url = questions_url(world)
    body = {"question": "Q", "type": "S"}
    response = await client.post(url, json=body, headers=auth(world.admin))
    assert response.status_code == 400
    assert response.json() == {"identifier": ["This field is required."]}
    response = await client.post(url, json={**body, "identifier": ""}, headers=auth(world.admin))
    assert response.json() == {"identifier": ["This field may not be blank."]}
    # Inline options need one too.
    body = {**body, "type": "C", "identifier": "size", "options": [{"answer": "S"}]}
    response = await client.post(url, json=body, headers=auth(world.admin))
    assert response.status_code == 400
    assert response.json() == {"options": [{"identifier": ["This field is required."]}]}
    body["options"] = [{"answer": "S", "identifier": "s"}]
    response = await client.post(url, json=body, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    assert response.json()["options"][0]["identifier"] == "s"


async def test_identifier_taken_is_400_case_insensitive(client, world: World):
    await create(client, world, identifier="shirt")
    response = await client.post(
        questions_url(world),
        json={"question": "Q", "type": "S", "identifier": "SHIRT"},
        headers=auth(world.admin),
    )
    assert field_errors(response, "identifier") == {
        "identifier": ["This identifier is already used for a different question."]
    }


async def test_same_identifier_in_another_event_is_fine(client, world: World, factory):
    other = await factory.event(world.org, "other")
    await create(client, world, identifier="shirt")
    response = await client.post(
        questions_url(world, other),
        json={"question": "Q", "type": "S", "identifier": "shirt"},
        headers=auth(world.admin),
    )
    assert response.status_code == 201, response.text


async def test_identifier_characters(client, world: World):
    response = await client.post(
        questions_url(world),
        json={"question": "Q", "type": "S", "identifier": "no spaces"},
        headers=auth(world.admin),
    )
    field_errors(response, "identifier")


async def test_patch_changes_supplied_fields_only(client, world: World, factory):
    ticket = await item(factory, world.event)
    body = await create(client, world, **FULL, items=[ticket.id])
    url = question_url(world, body["id"])
    response = await client.patch(url, json={"position": 2}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json() == {**body, "position": 2}


async def test_patch_keeps_own_identifier(client, world: World):
    body = await create(client, world, identifier="mine")
    url = question_url(world, body["id"])
    response = await client.patch(url, json={"identifier": "MINE"}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json()["identifier"] == "MINE"


async def test_put_keeps_omitted_fields(client, world: World, factory):
    ticket = await item(factory, world.event)
    body = await create(client, world, **FULL, items=[ticket.id])
    url = question_url(world, body["id"])
    # Cross-field rules see the merged state: the kept number bounds refuse a text type.
    new = {"question": {"en": "New"}, "identifier": FULL["identifier"]}
    response = await client.put(url, json={**new, "type": "S"}, headers=auth(world.admin))
    assert response.status_code == 400 and "valid_number_max" in response.json()
    response = await client.put(url, json={**new, "type": "N"}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    got = response.json()
    assert got == {**body, "question": {"en": "New"}}


async def test_put_requires_question_and_type(client, world: World):
    body = await create(client, world)
    response = await client.put(question_url(world, body["id"]), json={}, headers=auth(world.admin))
    assert field_errors(response, "question", "type", "identifier") == {
        "question": ["This field is required."],
        "type": ["This field is required."],
        "identifier": ["This field is required."],
    }


async def test_delete_removes_question_and_options(client, world: World, factory):
    body = await choice(client, world, "a", "b")
    url = question_url(world, body["id"])
    response = await client.delete(url, headers=auth(world.admin))
    assert response.status_code == 204
    assert await stored_question(factory, body["id"]) is None
    assert await stored_options(factory, body["id"]) == []
    assert (await client.get(url, headers=auth(world.admin))).status_code == 404


async def test_delete_clears_dependents(client, world: World, factory):
    base = await create(client, world, type="B")
    dependent = await create(
        client, world, dependency_question=base["id"], dependency_values=["True"]
    )
    response = await client.delete(question_url(world, base["id"]), headers=auth(world.admin))
    assert response.status_code == 204
    got = (await client.get(question_url(world, dependent["id"]), headers=auth(world.admin))).json()
    assert got["dependency_question"] is None
    assert got["dependency_values"] == [] and got["dependency_value"] is None
    stored = await stored_question(factory, dependent["id"])
    assert stored is not None and stored.dependency_values == []


async def test_unknown_question_is_404(client, world: World):
    for pk in ("999", "abc", "0"):
        response = await client.get(question_url(world, pk), headers=auth(world.admin))
        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}


async def test_question_of_another_event_is_404(client, world: World, factory):
    other = await factory.event(world.org, "other")
    response = await client.post(
        questions_url(world, other),
        json={"question": "Q", "type": "S", "identifier": "Q"},
        headers=auth(world.admin),
    )
    pk = response.json()["id"]
    for method in ("GET", "PATCH", "PUT", "DELETE"):
        body = None if method in ("GET", "DELETE") else {"question": "Q", "type": "S"}
        response = await client.request(
            method, question_url(world, pk), json=body, headers=auth(world.admin)
        )
        assert response.status_code == 404, method
    listed = (await client.get(questions_url(world), headers=auth(world.admin))).json()
    assert listed["count"] == 0


async def test_list_ordering(client, world: World):
    a = await create(client, world, position=3)
    b = await create(client, world, position=1)
    c = await create(client, world, position=1)
    url = questions_url(world)

    async def ids(query: str = "") -> list[int]:
        response = await client.get(url + query, headers=auth(world.admin))
        assert response.status_code == 200, response.text
        return [q["id"] for q in response.json()["results"]]

    assert await ids() == [b["id"], c["id"], a["id"]]
    assert await ids("?ordering=-position") == [a["id"], c["id"], b["id"]]
    assert await ids("?ordering=id") == [a["id"], b["id"], c["id"]]
    assert await ids("?ordering=-id") == [c["id"], b["id"], a["id"]]
    assert await ids("?ordering=type") == await ids()  # unknown: ignored, as the reference


async def test_list_filters(client, world: World):
    a = await create(client, world, required=True, identifier="one")
    b = await create(client, world, ask_during_checkin=True)
    url = questions_url(world)

    async def ids(query: str) -> list[int]:
        response = await client.get(url + query, headers=auth(world.admin))
        assert response.status_code == 200, response.text
        return [q["id"] for q in response.json()["results"]]

    assert await ids("?required=true") == [a["id"]]
    assert await ids("?ask_during_checkin=true") == [b["id"]]
    assert await ids("?ask_during_checkin=false") == [a["id"]]
    assert await ids("?identifier=one") == [a["id"]]
    response = await client.get(url + "?required=maybe", headers=auth(world.admin))
    field_errors(response, "required")


async def test_list_paginates(client, world: World):
    for _ in range(3):
        await create(client, world)
    response = await client.get(questions_url(world) + "?page_size=2", headers=auth(world.admin))
    body = response.json()
    assert body["count"] == 3 and len(body["results"]) == 2 and body["next"]
    response = await client.get(questions_url(world) + "?page=3", headers=auth(world.admin))
    assert response.status_code == 404


async def test_read_needs_no_write_permission(client, world: World, factory):
    body = await create(client, world)
    reader = await factory.token(await factory.team(world.org, event_permissions=[]))
    assert (await client.get(questions_url(world), headers=auth(reader))).status_code == 200
    url = question_url(world, body["id"])
    assert (await client.get(url, headers=auth(reader))).status_code == 200
    response = await client.patch(url, json={"position": 1}, headers=auth(reader))
    assert response.status_code == 403


async def _list_queries(client, world: World, factory, count_queries, n: int) -> int:
    ticket = await item(factory, world.event)
    base = await choice(client, world, "x", "y", type="M")
    for i in range(n - 1):
        await choice(
            client,
            world,
            f"a{i}",
            f"b{i}",
            items=[ticket.id],
            dependency_question=base["id"],
            dependency_values=["x"],
        )
    with count_queries() as q:
        response = await client.get(questions_url(world), headers=auth(world.admin))
    assert response.status_code == 200
    assert len(response.json()["results"]) == min(n, 50)
    assert all(r["options"] for r in response.json()["results"])
    return q.count


async def test_list_takes_a_fixed_number_of_queries(client, world: World, factory, count_queries):
    few = await _list_queries(client, world, factory, count_queries, 5)
    # The same event, now holding 65 questions in all: the count must not grow.
    many = await _list_queries(client, world, factory, count_queries, 60)
    assert many == few, (few, many)
