"""The DRF-shaped error tree built from pydantic errors (admit.kit.http.errors)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, TypeAdapter, ValidationError, model_validator

from admit.kit.http.errors import (
    NON_FIELD,
    APIError,
    FieldErrors,
    errors_from_pydantic,
    forbidden,
    not_found,
    validation_error,
)
from admit.kit.resources.schema import DateTime, I18n, Slug, TimeZoneName

DATETIME_MESSAGE = (
    "Datetime has wrong format. Use one of these formats instead: "
    "YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."
)


class Position(BaseModel):
    item: int
    variation: int | None = None

    @model_validator(mode="after")
    def _variation_needs_item(self) -> Position:
        if self.variation is not None and self.variation == self.item:
            raise ValueError("Variation and item must differ.")
        return self


class Order(BaseModel):
    email: str
    count: int = 0
    paid: bool = False
    price: Decimal = Decimal("0")
    when: dt.datetime | None = None
    day: dt.date | None = None
    kind: Literal["a", "b"] = "a"
    code: Annotated[str, Field(min_length=1, max_length=5)] = "x"
    amount: Annotated[int, Field(ge=0, le=10)] = 0
    positions: list[Position] = []
    tags: list[int] = []
    meta: dict[str, str] = {}

    @model_validator(mode="after")
    def _cross_field(self) -> Order:
        if self.email == "forbidden@example.org" and self.paid:
            raise ValueError("Paid orders cannot use this address.")
        return self


def tree(model: type[BaseModel] | TypeAdapter[Any], data: Any) -> Any:
    with pytest.raises(ValidationError) as info:
        if isinstance(model, TypeAdapter):
            model.validate_python(data)
        else:
            model.model_validate(data)
    return errors_from_pydantic(info.value.errors(include_url=False))


# -- shape --------------------------------------------------------------------------------


def test_flat_field_errors_keyed_by_field_with_message_lists():
    errors = tree(Order, {"email": "a@b.c", "count": "many", "paid": "perhaps"})
    assert errors == {
        "count": ["A valid integer is required."],
        "paid": ["Must be a valid boolean."],
    }


def test_every_invalid_field_is_reported_at_once():
    errors = tree(Order, {"count": "x", "kind": "z"})
    assert set(errors) == {"email", "count", "kind"}
    assert all(isinstance(v, list) and v and isinstance(v[0], str) for v in errors.values())


def test_nested_list_of_objects_keeps_positions_with_empty_dicts_for_valid_ones():
    errors = tree(
        Order,
        {"email": "a@b.c", "positions": [{"item": 1}, {"item": "x"}, {"item": 2}, {}]},
    )
    assert errors == {
        "positions": [
            {},
            {"item": ["A valid integer is required."]},
            {},
            {"item": ["This field is required."]},
        ]
    }


def test_nested_list_valid_tail_elements_are_not_padded_beyond_the_last_error():
    errors = tree(Order, {"email": "a@b.c", "positions": [{"item": "x"}, {"item": 1}]})
    assert errors == {"positions": [{"item": ["A valid integer is required."]}]}


def test_several_errors_in_one_nested_element_are_merged():
    errors = tree(Order, {"email": "a@b.c", "positions": [{"item": "x", "variation": "y"}]})
    assert errors == {
        "positions": [
            {
                "item": ["A valid integer is required."],
                "variation": ["A valid integer is required."],
            }
        ]
    }


def test_model_level_rule_in_nested_element_is_that_elements_non_field_error():
    errors = tree(
        Order, {"email": "a@b.c", "positions": [{"item": 1}, {"item": 2, "variation": 2}]}
    )
    assert errors == {"positions": [{}, {NON_FIELD: ["Variation and item must differ."]}]}


def test_non_object_element_in_list_of_objects_is_reported_on_that_element():
    errors = tree(Order, {"email": "a@b.c", "positions": [{"item": 1}, 5]})
    assert errors == {
        "positions": [{}, {NON_FIELD: ["Invalid data. Expected a dictionary, but got int."]}]
    }


def test_non_object_element_does_not_swallow_or_shift_other_elements_errors():
    # Regression: a bad element before an object error used to be dropped, and one after it
    # was appended as a bare string at the wrong position.
    errors = tree(Order, {"email": "a@b.c", "positions": [7, {"item": "x"}]})
    assert errors == {
        "positions": [
            {NON_FIELD: ["Invalid data. Expected a dictionary, but got int."]},
            {"item": ["A valid integer is required."]},
        ]
    }
    errors = tree(Order, {"email": "a@b.c", "positions": [{"item": "x"}, {"item": 1}, {}, "s"]})
    assert errors == {
        "positions": [
            {"item": ["A valid integer is required."]},
            {},
            {"item": ["This field is required."]},
            {NON_FIELD: ["Invalid data. Expected a dictionary, but got str."]},
        ]
    }


def test_null_element_in_list_of_objects():
    errors = tree(Order, {"email": "a@b.c", "positions": [None]})
    assert errors == {"positions": [{NON_FIELD: ["This field may not be null."]}]}


def test_errors_on_primitive_list_elements_are_reported_on_the_list():
    errors = tree(Order, {"email": "a@b.c", "tags": [1, "two", 3, "four"]})
    assert errors == {
        "tags": ["A valid integer is required.", "A valid integer is required."],
    }


def test_a_dict_as_primitive_list_element_is_still_reported_on_the_list():
    errors = tree(Order, {"email": "a@b.c", "tags": [{"a": 1}]})
    assert errors == {"tags": ["A valid integer is required."]}


def test_list_field_given_a_non_list():
    errors = tree(Order, {"email": "a@b.c", "positions": "abc", "tags": {"a": 1}})
    assert errors == {
        "positions": ['Expected a list of items but got type "str".'],
        "tags": ['Expected a list of items but got type "dict".'],
    }


def test_dict_field_given_a_non_dict_and_bad_values():
    assert tree(Order, {"email": "a@b.c", "meta": [1]}) == {
        "meta": ['Expected a dictionary of items but got type "list".']
    }
    errors = tree(Order, {"email": "a@b.c", "meta": {"color": 5}})
    assert errors == {"meta": {"color": ["Not a valid string."]}}


def test_model_level_validator_gives_non_field_errors():
    errors = tree(Order, {"email": "forbidden@example.org", "paid": True})
    assert errors == {NON_FIELD: ["Paid orders cannot use this address."]}


def test_whole_body_of_wrong_type_gives_non_field_errors():
    assert tree(Order, [1, 2]) == {
        NON_FIELD: ["Invalid data. Expected a dictionary, but got list."]
    }
    assert tree(Order, "text") == {NON_FIELD: ["Invalid data. Expected a dictionary, but got str."]}


def test_top_level_list_body_errors_are_a_list_aligned_with_the_input():
    adapter = TypeAdapter(list[Position])
    errors = tree(adapter, [{"item": 1}, {"item": "x"}, 3])
    assert errors == [
        {},
        {"item": ["A valid integer is required."]},
        {NON_FIELD: ["Invalid data. Expected a dictionary, but got int."]},
    ]


def test_prefix_nests_the_tree_under_the_given_path():
    with pytest.raises(ValidationError) as info:
        Position.model_validate({"item": "x"})
    errors = errors_from_pydantic(info.value.errors(include_url=False), prefix=("answers", 2))
    assert errors == {"answers": [{}, {}, {"item": ["A valid integer is required."]}]}


def test_validation_error_wraps_the_tree_in_a_400_field_errors():
    with pytest.raises(ValidationError) as info:
        Order.model_validate({})
    exc = validation_error(info.value)
    assert isinstance(exc, FieldErrors)
    assert exc.status == 400
    assert exc.errors == {"email": ["This field is required."]}


def test_validator_tags_do_not_leak_into_field_names():
    class Event(BaseModel):
        slug: Slug
        tz: TimeZoneName = "UTC"
        name: I18n = {}
        start: DateTime | None = None

    errors = tree(Event, {"slug": "-bad", "tz": "Mars/Olympus", "name": 5, "start": "x"})
    assert set(errors) == {"slug", "tz", "name", "start"}
    assert errors["slug"][0].startswith("The slug may only contain")
    assert errors["tz"] == ['"Mars/Olympus" is not a valid choice.']
    assert errors["name"] == ['Expected a dictionary of items but got type "int".']
    assert errors["start"] == [DATETIME_MESSAGE]


# -- the message table --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({}, "email", "This field is required."),
        ({"email": None}, "email", "This field may not be null."),
        ({"count": None}, "count", "This field may not be null."),
        ({"email": 5}, "email", "Not a valid string."),
        ({"count": "abc"}, "count", "A valid integer is required."),
        ({"count": 1.5}, "count", "A valid integer is required."),
        ({"count": [1]}, "count", "A valid integer is required."),
        ({"paid": "maybe"}, "paid", "Must be a valid boolean."),
        ({"paid": 2}, "paid", "Must be a valid boolean."),
        ({"price": "lots"}, "price", "A valid number is required."),
        ({"price": "NaN"}, "price", "A valid number is required."),
        ({"when": "not a date"}, "when", DATETIME_MESSAGE),
        ({"when": "2024-13-45T10:00:00"}, "when", DATETIME_MESSAGE),
        ({"when": []}, "when", DATETIME_MESSAGE),
        (
            {"day": "2024-02-30"},
            "day",
            "Date has wrong format. Use one of these formats instead: YYYY-MM-DD.",
        ),
        ({"kind": "x"}, "kind", '"x" is not a valid choice.'),
        ({"code": ""}, "code", "This field may not be blank."),
        ({"code": "abcdef"}, "code", "Ensure this field has no more than 5 characters."),
        ({"amount": -1}, "amount", "Ensure this value is greater than or equal to 0."),
        ({"amount": 11}, "amount", "Ensure this value is less than or equal to 10."),
    ],
)
def test_message_table(data: dict[str, Any], field: str, message: str):
    errors = tree(Order, {"email": "a@b.c", **data} if field != "email" else data)
    assert errors[field] == [message]


def test_literal_choice_message_quotes_the_input_verbatim():
    class Pick(BaseModel):
        mode: Literal["on", "off"]

    assert tree(Pick, {"mode": "sideways"}) == {"mode": ['"sideways" is not a valid choice.']}


def test_value_error_message_is_passed_through_without_pydantic_prefix():
    errors = tree(Order, {"email": "forbidden@example.org", "paid": True})
    (message,) = errors[NON_FIELD]
    assert not message.startswith("Value error")


def test_unknown_error_type_falls_back_to_pydantic_message():
    errors = errors_from_pydantic(
        [{"type": "something_new", "loc": ("x",), "msg": "Custom text", "input": 1}]
    )
    assert errors == {"x": ["Custom text"]}


def test_error_without_location_is_a_non_field_error():
    errors = errors_from_pydantic([{"type": "value_error", "loc": (), "msg": "Bad", "input": 1}])
    assert errors == {NON_FIELD: ["Bad"]}


# -- the exception helpers ----------------------------------------------------------------


def test_api_error_body_and_helpers():
    exc = APIError(409, "Conflict.", headers={"Retry-After": "5"}, extra={"code": "locked"})
    assert exc.body() == {"detail": "Conflict.", "code": "locked"}
    assert exc.headers == {"Retry-After": "5"}
    assert (not_found().status, not_found().detail) == (404, "Not found.")
    assert forbidden().status == 403
    assert forbidden().body() == {"detail": "You do not have permission to perform this action."}


def test_field_errors_helpers():
    single = FieldErrors.single("name", "Too long.")
    assert (single.errors, single.status) == ({"name": ["Too long."]}, 400)
    general = FieldErrors.general("Nope.", status=409)
    assert (general.errors, general.status) == ({NON_FIELD: ["Nope."]}, 409)
