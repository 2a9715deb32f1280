"""Question options: nested CRUD, identifiers, 404s, ordering, and what dependents see."""

from __future__ import annotations

from typing import Any

from tests.catalog_questions.helpers import (
    choice,
    create,
    field_errors,
    fresh_identifier,
    option_url,
    options_url,
    question_url,
    questions_url,
    stored_options,
)
from tests.factories import World, auth


async def add(client: Any, world: World, question: int, **fields: Any) -> Any:
    fields.setdefault("answer", {"en": "Yes"})
    fields.setdefault("identifier", fresh_identifier("O"))
    return await client.post(options_url(world, question), json=fields, headers=auth(world.admin))


async def test_create_round_trip(client, world: World, factory):
    q = await create(client, world, type="C")
    response = await add(
        client, world, q["id"], identifier="big", position=3, answer={"en": "L", "de": "G"}
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body == {
        "id": body["id"],
        "identifier": "big",
        "position": 3,
        "answer": {"en": "L", "de": "G"},
    }
    fetched = await client.get(option_url(world, q["id"], body["id"]), headers=auth(world.admin))
    assert fetched.json() == body
    question = await client.get(question_url(world, q["id"]), headers=auth(world.admin))
    assert question.json()["options"] == [body]
    assert [o.id for o in await stored_options(factory, q["id"])] == [body["id"]]


async def test_identifier_required_and_defaults(client, world: World):
    q = await create(client, world, type="M")
    url = options_url(world, q["id"])
    response = await client.post(url, json={"answer": "Plain"}, headers=auth(world.admin))
    assert response.status_code == 400
    assert response.json() == {"identifier": ["This field is required."]}
    for blank, message in (
        ("", "This field may not be blank."),
        (None, "This field may not be null."),
    ):
        body = {"answer": "Plain", "identifier": blank}
        response = await client.post(url, json=body, headers=auth(world.admin))
        assert response.json() == {"identifier": [message]}
    body = (await add(client, world, q["id"], answer="Plain")).json()
    assert body["answer"] == {"en": "Plain"} and body["position"] == 0


async def test_identifier_unique_within_the_question(client, world: World):
    q = await choice(client, world, "a")
    response = await add(client, world, q["id"], identifier="a")
    assert field_errors(response, "identifier") == {
        "identifier": ['The identifier "a" is already used for a different option.']
    }
    other = await choice(client, world, "b")
    assert (await add(client, world, other["id"], identifier="a")).status_code == 201


async def test_answer_required_and_identifier_characters(client, world: World):
    q = await create(client, world, type="C")
    response = await client.post(options_url(world, q["id"]), json={}, headers=auth(world.admin))
    assert field_errors(response, "answer", "identifier") == {
        "identifier": ["This field is required."],
        "answer": ["This field is required."],
    }
    field_errors(await add(client, world, q["id"], answer={"en": ""}), "answer")
    field_errors(await add(client, world, q["id"], identifier="a b"), "identifier")


async def test_only_choice_questions_take_options(client, world: World):
    q = await create(client, world, type="S")
    response = await add(client, world, q["id"])
    assert field_errors(response, "non_field_errors") == {
        "non_field_errors": ["Options can only be added to choice and multiple choice questions."]
    }


async def test_patch_and_put(client, world: World):
    q = await create(client, world, type="C")
    body = (await add(client, world, q["id"], identifier="keep", position=4, answer="A")).json()
    url = option_url(world, q["id"], body["id"])
    patched = await client.patch(url, json={"answer": "B"}, headers=auth(world.admin))
    assert patched.json() == {**body, "answer": {"en": "B"}}
    put = await client.put(url, json={"answer": "C"}, headers=auth(world.admin))
    assert put.json() == {"identifier": ["This field is required."]}
    put = await client.put(
        url, json={"answer": "C", "identifier": "keep"}, headers=auth(world.admin)
    )
    assert put.status_code == 200, put.text
    # PUT keeps the position and the identifier.
    assert put.json() == {**body, "answer": {"en": "C"}}
    field_errors(await client.put(url, json={}, headers=auth(world.admin)), "answer", "identifier")


async def test_patch_identifier_uniqueness_excludes_itself(client, world: World):
    q = await choice(client, world, "a", "b")
    first = q["options"][0]
    url = option_url(world, q["id"], first["id"])
    assert (
        await client.patch(url, json={"identifier": "a"}, headers=auth(world.admin))
    ).status_code == 200
    response = await client.patch(url, json={"identifier": "b"}, headers=auth(world.admin))
    field_errors(response, "identifier")


async def test_rename_follows_into_dependents(client, world: World):
    q = await choice(client, world, "a", "b")
    dependent = await create(
        client, world, dependency_question=q["id"], dependency_values=["a", "b"]
    )
    url = option_url(world, q["id"], q["options"][0]["id"])
    response = await client.patch(url, json={"identifier": "z"}, headers=auth(world.admin))
    assert response.status_code == 200
    got = (await client.get(question_url(world, dependent["id"]), headers=auth(world.admin))).json()
    assert got["dependency_values"] == ["z", "b"]


async def test_delete_option(client, world: World, factory):
    q = await choice(client, world, "a", "b")
    dependent = await create(
        client, world, dependency_question=q["id"], dependency_values=["a", "b"]
    )
    first, second = q["options"]
    response = await client.delete(
        option_url(world, q["id"], first["id"]), headers=auth(world.admin)
    )
    assert response.status_code == 204
    assert [o.id for o in await stored_options(factory, q["id"])] == [second["id"]]
    got = (await client.get(question_url(world, dependent["id"]), headers=auth(world.admin))).json()
    assert got["dependency_question"] == q["id"] and got["dependency_values"] == ["b"]
    await client.delete(option_url(world, q["id"], second["id"]), headers=auth(world.admin))
    got = (await client.get(question_url(world, dependent["id"]), headers=auth(world.admin))).json()
    assert got["dependency_question"] is None and got["dependency_values"] == []


async def test_unknown_or_foreign_question_is_404(client, world: World, factory):
    other = await factory.event(world.org, "other")
    foreign = await client.post(
        questions_url(world, other),
        json={
            "question": "Q",
            "type": "C",
            "identifier": "Q",
            "options": [{"answer": "x", "identifier": "x"}],
        },
        headers=auth(world.admin),
    )
    foreign_q = foreign.json()
    for question in ("999", "abc", str(foreign_q["id"])):
        for method, url in (
            ("GET", options_url(world, question)),
            ("POST", options_url(world, question)),
            ("GET", option_url(world, question, foreign_q["options"][0]["id"])),
            ("PATCH", option_url(world, question, foreign_q["options"][0]["id"])),
            ("DELETE", option_url(world, question, foreign_q["options"][0]["id"])),
        ):
            body = None if method in ("GET", "DELETE") else {"answer": "x"}
            response = await client.request(method, url, json=body, headers=auth(world.admin))
            assert response.status_code == 404, (method, url)
            assert response.json() == {"detail": "Not found."}


async def test_option_of_another_question_is_404(client, world: World):
    a = await choice(client, world, "x")
    b = await choice(client, world, "y")
    url = option_url(world, b["id"], a["options"][0]["id"])
    for method in ("GET", "PUT", "PATCH", "DELETE"):
        body = None if method in ("GET", "DELETE") else {"answer": "z"}
        response = await client.request(method, url, json=body, headers=auth(world.admin))
        assert response.status_code == 404, method
    missing = option_url(world, a["id"], 999999)
    assert (await client.get(missing, headers=auth(world.admin))).status_code == 404


async def test_list_ordering_and_active(client, world: World):
    q = await create(client, world, type="C")
    ids = [(await add(client, world, q["id"], position=p)).json()["id"] for p in (2, 1, 1)]
    url = options_url(world, q["id"])

    async def listed(query: str = "") -> list[int]:
        response = await client.get(url + query, headers=auth(world.admin))
        assert response.status_code == 200, response.text
        return [o["id"] for o in response.json()["results"]]

    assert await listed() == [ids[1], ids[2], ids[0]]
    assert await listed("?ordering=-id") == [ids[2], ids[1], ids[0]]
    assert await listed("?ordering=-position") == [ids[0], ids[2], ids[1]]
    assert await listed("?active=true") == [ids[1], ids[2], ids[0]]
    assert await listed("?active=false") == []
    field_errors(await client.get(url + "?active=perhaps", headers=auth(world.admin)), "active")
    assert await listed("?ordering=answer") == await listed("")  # unknown: ignored


async def test_write_needs_items_permission(client, world: World, factory):
    q = await choice(client, world, "a")
    reader = await factory.token(await factory.team(world.org, event_permissions=[]))
    assert (await client.get(options_url(world, q["id"]), headers=auth(reader))).status_code == 200
    response = await client.post(
        options_url(world, q["id"]), json={"answer": "b"}, headers=auth(reader)
    )
    assert response.status_code == 403
