"""Question validation: types and their settings, options, items, dependencies and cycles."""

from __future__ import annotations

from typing import Any

import pytest

from tests.catalog_questions.helpers import (
    choice,
    create,
    field_errors,
    item,
    question_url,
    questions_url,
    with_identifiers,
)
from tests.factories import World, auth

TYPES = ["N", "S", "T", "B", "C", "M", "F", "D", "H", "W", "CC", "TEL"]


async def post(client: Any, world: World, **fields: Any) -> Any:
    fields.setdefault("question", "Q")
    body = with_identifiers(fields)
    return await client.post(questions_url(world), json=body, headers=auth(world.admin))


async def patch(client: Any, world: World, pk: int, **fields: Any) -> Any:
    return await client.patch(question_url(world, pk), json=fields, headers=auth(world.admin))


@pytest.mark.parametrize("kind", TYPES)
async def test_every_type_is_accepted(client, world: World, kind: str):
    response = await post(client, world, type=kind)
    assert response.status_code == 201, response.text
    assert response.json()["type"] == kind


async def test_unknown_type_and_missing_fields(client, world: World):
    assert field_errors(await post(client, world, type="X"), "type") == {
        "type": ['"X" is not a valid choice.']
    }
    response = await client.post(questions_url(world), json={}, headers=auth(world.admin))
    field_errors(response, "question", "type", "identifier")
    field_errors(await post(client, world, type="S", question={"en": " "}), "question")


@pytest.mark.parametrize(
    ("name", "value", "good_type"),
    [
        ("valid_number_min", "1", "N"),
        ("valid_number_max", "1", "N"),
        ("valid_date_min", "2030-01-01", "D"),
        ("valid_date_max", "2030-01-01", "D"),
        ("valid_datetime_min", "2030-01-01T00:00:00Z", "W"),
        ("valid_datetime_max", "2030-01-01T00:00:00Z", "W"),
        ("valid_string_length_max", 5, "S"),
        ("valid_file_portrait", True, "F"),
    ],
)
async def test_settings_only_for_their_type(client, world: World, name, value, good_type):
    response = await post(client, world, type="B", **{name: value})
    body = field_errors(response, name)
    assert body[name][0].startswith("This setting only applies to")
    assert (await post(client, world, type=good_type, **{name: value})).status_code == 201


async def test_string_length_also_for_multiline_and_at_least_one(client, world: World):
    assert (await post(client, world, type="T", valid_string_length_max=1)).status_code == 201
    field_errors(
        await post(client, world, type="S", valid_string_length_max=0), "valid_string_length_max"
    )


@pytest.mark.parametrize(
    ("kind", "low", "high", "lo", "hi"),
    [
        ("N", "valid_number_min", "valid_number_max", "5", "4.5"),
        ("D", "valid_date_min", "valid_date_max", "2030-02-01", "2030-01-01"),
        ("W", "valid_datetime_min", "valid_datetime_max", "2030-01-01T12:00Z", "2030-01-01T11:00Z"),
    ],
)
async def test_minimum_not_above_maximum(client, world: World, kind, low, high, lo, hi):
    response = await post(client, world, type=kind, **{low: lo, high: hi})
    assert field_errors(response, high) == {
        high: ["The maximum must not be less than the minimum."]
    }
    equal = await post(client, world, type=kind, **{low: lo, high: lo})
    assert equal.status_code == 201, equal.text


async def test_minimum_above_maximum_on_patch(client, world: World):
    body = await create(client, world, type="N", valid_number_max="10")
    response = await patch(client, world, body["id"], valid_number_min="11")
    field_errors(response, "valid_number_max")


@pytest.mark.parametrize("value", [True, "abc", "1e400", "NaN", "1.1234567"])
async def test_bad_number_bounds(client, world: World, value):
    field_errors(await post(client, world, type="N", valid_number_min=value), "valid_number_min")


async def test_bad_dates(client, world: World):
    field_errors(await post(client, world, type="D", valid_date_min=1700000000), "valid_date_min")
    field_errors(await post(client, world, type="D", valid_date_min="2030-13-01"), "valid_date_min")
    field_errors(
        await post(client, world, type="W", valid_datetime_min="2030-01-01"), "valid_datetime_min"
    )


async def test_options_only_for_choice_types(client, world: World):
    options = [{"answer": "a"}]
    for kind in ("C", "M"):
        assert (await post(client, world, type=kind, options=options)).status_code == 201
    response = await post(client, world, type="S", options=options)
    assert field_errors(response, "options") == {
        "options": ["Options are only allowed for choice and multiple choice questions."]
    }
    assert (await post(client, world, type="S", options=[])).status_code == 201


async def test_options_identifiers_and_order(client, world: World):
    response = await post(
        client,
        world,
        type="C",
        options=[
            {"answer": {"en": "S"}, "identifier": "s", "position": 2},
            {"answer": "M", "identifier": "m", "position": 1},
            {"answer": "L", "identifier": "l", "position": 1},
        ],
    )
    assert response.status_code == 201, response.text
    options = response.json()["options"]
    assert [o["answer"] for o in options] == [{"en": "M"}, {"en": "L"}, {"en": "S"}]
    assert [o["identifier"] for o in options] == ["m", "l", "s"]
    assert [set(o) for o in options] == [{"id", "identifier", "position", "answer"}] * 3


async def test_option_identifiers_unique_within_the_question(client, world: World):
    response = await post(
        client,
        world,
        type="C",
        options=[{"answer": "a", "identifier": "x"}, {"answer": "b", "identifier": "x"}],
    )
    assert field_errors(response, "options") == {
        "options": [
            {},
            {"identifier": ['The identifier "x" is already used for a different option.']},
        ]
    }
    # Other questions may use the same option identifiers.
    await choice(client, world, "x")
    await choice(client, world, "x")


async def test_option_errors_are_nested(client, world: World):
    response = await post(client, world, type="C", options=[{"answer": "a"}, {"identifier": "b"}])
    assert field_errors(response, "options") == {
        "options": [{}, {"answer": ["This field is required."]}]
    }


async def test_options_not_writable_on_update(client, world: World):
    body = await choice(client, world, "a")
    for method in ("PATCH", "PUT"):
        response = await client.request(
            method,
            question_url(world, body["id"]),
            json={
                "question": "Q",
                "type": "C",
                "identifier": body["identifier"],
                "options": [{"answer": "b", "identifier": "b"}],
            },
            headers=auth(world.admin),
        )
        assert field_errors(response, "non_field_errors") == {
            "non_field_errors": [
                "Updating options via PATCH/PUT is not supported. Please use the dedicated "
                "nested endpoint."
            ]
        }


async def test_type_with_options_stays_a_choice(client, world: World):
    body = await choice(client, world, "a")
    response = await patch(client, world, body["id"], type="S")
    field_errors(response, "type")
    switched = await patch(client, world, body["id"], type="M")
    assert switched.status_code == 200 and switched.json()["type"] == "M"
    empty = await create(client, world, type="C")
    assert (await patch(client, world, empty["id"], type="S")).status_code == 200


async def test_items_must_belong_to_the_event(client, world: World, factory):
    mine = await item(factory, world.event)
    theirs = await item(factory, world.other_event)
    response = await post(client, world, type="S", items=[mine.id, theirs.id, 2**40])
    assert field_errors(response, "items") == {
        "items": [
            f'Invalid pk "{theirs.id}" - object does not exist.',
            f'Invalid pk "{2**40}" - object does not exist.',
        ]
    }
    field_errors(await post(client, world, type="S", items=["x"]), "items")
    field_errors(await post(client, world, type="S", items=5), "items")


async def test_dependency_on_boolean(client, world: World):
    base = await create(client, world, type="B")
    body = await create(client, world, dependency_question=base["id"], dependency_values=["False"])
    assert body["dependency_question"] == base["id"]
    assert body["dependency_values"] == ["False"] and body["dependency_value"] == "False"
    response = await post(
        client, world, type="S", dependency_question=base["id"], dependency_values=["yes"]
    )
    field_errors(response, "dependency_values")


async def test_dependency_on_choice_uses_option_identifiers(client, world: World):
    base = await choice(client, world, "red", "blue", type="M")
    body = await create(
        client, world, dependency_question=base["id"], dependency_values=["red", "blue"]
    )
    assert body["dependency_values"] == ["red", "blue"]
    response = await post(
        client, world, type="S", dependency_question=base["id"], dependency_values=["red", "green"]
    )
    assert list(field_errors(response, "dependency_values")["dependency_values"]) == [
        '"green" is not a valid choice. Use identifiers of the options of the dependency question.'
    ]


async def test_dependency_values_required(client, world: World):
    base = await create(client, world, type="B")
    for values in ([], None):
        fields = {"dependency_values": values} if values is not None else {}
        response = await post(client, world, type="S", dependency_question=base["id"], **fields)
        assert field_errors(response, "dependency_values") == {
            "dependency_values": ["This field is required."]
        }


async def test_deprecated_dependency_value_is_accepted(client, world: World):
    base = await create(client, world, type="B")
    body = await create(client, world, dependency_question=base["id"], dependency_value="True")
    assert body["dependency_values"] == ["True"] and body["dependency_value"] == "True"
    patched = await patch(client, world, body["id"], dependency_value="False")
    assert patched.json()["dependency_values"] == ["False"]


async def test_values_without_dependency_are_dropped(client, world: World):
    body = await create(client, world, dependency_values=["True"])
    assert body["dependency_values"] == [] and body["dependency_question"] is None


async def test_dependency_must_be_boolean_or_choice(client, world: World):
    base = await create(client, world, type="S")
    response = await post(
        client, world, type="S", dependency_question=base["id"], dependency_values=["x"]
    )
    assert field_errors(response, "dependency_question") == {
        "dependency_question": [
            "Question dependencies can only be set to boolean or choice questions."
        ]
    }


async def test_dependency_into_another_event_or_unknown(client, world: World, factory):
    other = await factory.event(world.org, "other")
    response = await client.post(
        questions_url(world, other),
        json={"question": "Q", "type": "B", "identifier": "Q"},
        headers=auth(world.admin),
    )
    foreign = response.json()["id"]
    for pk in (foreign, 99999, 2**40):
        response = await post(
            client, world, type="S", dependency_question=pk, dependency_values=["True"]
        )
        assert field_errors(response, "dependency_question") == {
            "dependency_question": [f'Invalid pk "{pk}" - object does not exist.']
        }


async def test_dependency_on_itself(client, world: World):
    body = await create(client, world, type="B")
    response = await patch(
        client, world, body["id"], dependency_question=body["id"], dependency_values=["True"]
    )
    assert field_errors(response, "dependency_question") == {
        "dependency_question": ["A question cannot depend on itself."]
    }


async def test_dependency_cycle_through_a_chain(client, world: World):
    a = await create(client, world, type="B")
    b = await create(
        client, world, type="B", dependency_question=a["id"], dependency_values=["True"]
    )
    c = await create(
        client, world, type="B", dependency_question=b["id"], dependency_values=["True"]
    )
    response = await patch(
        client, world, a["id"], dependency_question=c["id"], dependency_values=["True"]
    )
    assert field_errors(response, "dependency_question") == {
        "dependency_question": ["Circular dependency between questions detected."]
    }
    two = await patch(
        client, world, a["id"], dependency_question=b["id"], dependency_values=["True"]
    )
    field_errors(two, "dependency_question")
    # Not a cycle: a fresh question depending on the end of the chain.
    await create(client, world, dependency_question=c["id"], dependency_values=["False"])


async def test_dependency_and_checkin(client, world: World):
    base = await create(client, world, type="B")
    response = await post(
        client,
        world,
        type="S",
        ask_during_checkin=True,
        dependency_question=base["id"],
        dependency_values=["True"],
    )
    assert field_errors(response, "non_field_errors") == {
        "non_field_errors": ["Dependencies are not supported during check-in."]
    }
    at_checkin = await create(client, world, type="B", ask_during_checkin=True)
    response = await post(
        client, world, type="S", dependency_question=at_checkin["id"], dependency_values=["True"]
    )
    field_errors(response, "dependency_question")
    await create(client, world, dependency_question=base["id"], dependency_values=["True"])
    field_errors(
        await patch(client, world, base["id"], ask_during_checkin=True), "ask_during_checkin"
    )


async def test_depended_on_question_keeps_a_dependable_type(client, world: World):
    base = await choice(client, world, "a")
    await create(client, world, dependency_question=base["id"], dependency_values=["a"])
    assert (await patch(client, world, base["id"], type="M")).status_code == 200
    boolean = await create(client, world, type="B")
    await create(client, world, dependency_question=boolean["id"], dependency_values=["True"])
    field_errors(await patch(client, world, boolean["id"], type="S"), "type")
    field_errors(await patch(client, world, boolean["id"], type="C"), "type")


async def test_patch_dependency_clears_values(client, world: World):
    base = await create(client, world, type="B")
    body = await create(client, world, dependency_question=base["id"], dependency_values=["True"])
    response = await patch(client, world, body["id"], dependency_question=None)
    assert response.status_code == 200, response.text
    assert response.json()["dependency_values"] == []
    assert response.json()["dependency_value"] is None


async def test_write_body_must_be_an_object(client, world: World):
    response = await client.post(questions_url(world), json=[1], headers=auth(world.admin))
    field_errors(response, "non_field_errors")


async def test_bad_input_is_400_keyed_by_field(client, world: World):
    cases: list[tuple[str, Any]] = [
        ("required", "perhaps"),
        ("help_text", 5),
        ("options", "x"),
        ("dependency_values", "x"),
        ("dependency_question", True),
        ("items", [True]),
        ("position", 2**40),
        ("identifier", "x" * 191),
        ("question", {"en": 5}),
        ("valid_string_length_max", "many"),
    ]
    for name, value in cases:
        response = await post(client, world, type="S", **{name: value})
        field_errors(response, name)
    response = await post(client, world, type="C", options=[{"answer": ["x"]}])
    field_errors(response, "options")
