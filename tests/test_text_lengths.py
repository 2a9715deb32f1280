"""Every text a client can write is bounded: names (200 characters, 255 where the reference
allows that for products), free texts 100,000 characters, column-bound fields their column's
width. Generated from the write schemas themselves, so a new field cannot forget its limit;
then a few routes end to end, with the reference's message."""

from __future__ import annotations

import types
import typing
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import admit.app  # noqa: F401  (imports every write schema)
from admit.kit.resources.schema import NAME_MAX_LENGTH, TEXT_MAX_LENGTH, WriteModel, too_long
from tests.factories import World, auth

HUGE = "x" * (TEXT_MAX_LENGTH + 1)


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


def _shapes(annotation: Any) -> set[str]:
    """Which JSON shapes carrying text the annotation accepts: str, dict of str, list of str."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _shapes(typing.get_args(annotation)[0])
    if annotation is str:
        return {"str"}
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_shapes(a) for a in typing.get_args(annotation)))
    if origin is dict and "str" in _shapes(typing.get_args(annotation)[1]):
        return {"dict"}
    if origin is list and "str" in _shapes(typing.get_args(annotation)[0]):
        return {"list"}
    return set()


def _cases() -> list[tuple[type[BaseModel], str, str]]:
    cases = []
    schemas = {s for s in _subclasses(WriteModel) if s.__module__.startswith("admit.")}
    for schema in sorted(schemas, key=lambda s: (s.__module__, s.__qualname__)):
        for name, field in schema.model_fields.items():
            for shape in sorted(_shapes(field.annotation)):
                cases.append((schema, name, shape))
    return cases


CASES = _cases()
BODIES = {"str": HUGE, "dict": {"en": HUGE}, "list": [HUGE]}


def test_the_cases_cover_the_schemas():
    names = {f"{s.__name__}.{f}" for s, f, _ in CASES}
    for expected in ("EventIn.name", "ItemIn.description", "OrderIn.comment", "TeamIn.name"):
        assert expected in names
    assert len(CASES) > 150


@pytest.mark.parametrize(
    ("schema", "field", "shape"), CASES, ids=[f"{s.__name__}.{f}-{k}" for s, f, k in CASES]
)
def test_overlong_text_is_refused_at_the_field(schema: type[BaseModel], field: str, shape: str):
    """An over-long value fails validation at its own field (a limit, a choice or a format
    check: any of them keeps megabytes out of the database)."""
    alias = schema.model_fields[field].alias or field
    try:
        schema.model_validate({alias: BODIES[shape]})
    except ValidationError as exc:
        locations = {error["loc"][0] for error in exc.errors() if error["loc"]}
        assert alias in locations, exc.errors(include_input=False)
    else:
        pytest.fail(f"{schema.__name__}.{field} took {TEXT_MAX_LENGTH + 1} characters")


# -- end to end: the message, and the limits that differ ------------------------------------

E = "/api/v1/organizers/acme/events/summit"


async def _post(client, world: World, path: str, body: dict) -> Any:
    return await client.post(path, json=body, headers=auth(world.admin))


async def test_event_name_of_201_characters(client, world: World):
    body = {"name": {"en": "n" * 201}, "slug": "long", "date_from": "2031-01-01T10:00:00Z"}
    response = await _post(client, world, "/api/v1/organizers/acme/events/", body)
    assert response.status_code == 400
    assert response.json() == {"name": [too_long(NAME_MAX_LENGTH)]}
    body["name"] = {"en": "n" * 200, "de": "d" * 200}
    response = await _post(client, world, "/api/v1/organizers/acme/events/", body)
    assert response.status_code == 201, response.text
    assert response.json()["name"]["de"] == "d" * 200


async def test_item_names_may_have_255_characters_as_in_the_reference(client, world: World):
    body = {"name": {"en": "i" * 255}, "default_price": "1.00"}
    response = await _post(client, world, f"{E}/items/", body)
    assert response.status_code == 201, response.text
    body["name"] = {"en": "i" * 256}
    response = await _post(client, world, f"{E}/items/", body)
    assert response.status_code == 400
    assert response.json() == {"name": [too_long(255)]}


async def test_free_text_of_100_kb(client, world: World):
    body = {"name": "Shirt", "default_price": "1.00", "description": {"en": "d" * TEXT_MAX_LENGTH}}
    response = await _post(client, world, f"{E}/items/", body)
    assert response.status_code == 201, response.text
    body["description"] = {"en": HUGE}
    response = await _post(client, world, f"{E}/items/", body)
    assert response.status_code == 400
    assert response.json() == {"description": [too_long(TEXT_MAX_LENGTH)]}


async def test_a_plain_string_name_is_limited_as_well(client, world: World):
    response = await _post(client, world, f"{E}/quotas/", {"name": "q" * 201, "size": 1})
    assert response.status_code == 400
    assert response.json() == {"name": [too_long(NAME_MAX_LENGTH)]}
