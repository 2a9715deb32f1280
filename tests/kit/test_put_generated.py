"""PUT keeps what it omits, on every PUT route, enumerated from the application's routes so a
new PUT route without a recipe in ``put_recipes.py`` fails here.

For each: the object is made (``tests/conditional/recipes.py``) and given non-default values in
as many optional fields as the route takes (a PATCH); a PUT without the required fields is 400
naming each of them and changes nothing; a PUT of the required fields alone is 200 and changes
nothing either: every omitted optional field keeps its stored value (the reference's PUT).
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.routing import APIRoute

from admit.app import API_ROUTERS
from admit.kit.http.routing import API_PREFIX
from admit.kit.resources.crud import REQUIRED
from tests.conditional.recipes import RECIPES, Env
from tests.kit.put_recipes import PUT_RECIPES

ORG = f"{API_PREFIX}/organizers/{{organizer}}"


def _key(path: str) -> str:
    return path.removeprefix(ORG) if path.startswith(ORG) else path


def _put_paths(routes: Any) -> list[str]:
    return sorted({r.path for r in routes if isinstance(r, APIRoute) and "PUT" in r.methods})


PUT_PATHS = _put_paths(route for router in API_ROUTERS for route in router.routes)


# PUT routes that set a whole collection from one required field (nothing can be omitted):
# the public checkout's choice of a cart position's add-ons (``shop/api.py``).
WHOLE_SETS = frozenset(
    {
        f"{API_PREFIX}/public/organizers/{{organizer}}/events/{{event}}/carts/{{cart_id}}/positions/{{position}}/addons/"
    }
)


def test_every_put_route_has_a_recipe(app):
    every = _put_paths(app.routes)
    assert WHOLE_SETS <= set(every)  # the list names routes that exist
    served = [path for path in every if path not in WHOLE_SETS]
    assert served == PUT_PATHS  # what is parametrized below is what the application serves
    missing = [path for path in served if _key(path) not in PUT_RECIPES]
    assert not missing, f"PUT routes without a recipe in tests/kit/put_recipes.py: {missing}"
    assert len(served) >= 32


def _headers(env: Env) -> dict[str, str]:
    bearer = env.cache.get("bearer")  # scheduled exports belong to a user
    return {"Authorization": f"Bearer {bearer}"} if bearer else env.h


# Set on every write, whatever it changes.
VOLATILE = frozenset({"last_modified"})


async def _get(env: Env, url: str) -> dict[str, Any]:
    response = await env.client.get(url, headers=_headers(env))
    assert response.status_code == 200, response.text
    return {k: v for k, v in response.json().items() if k not in VOLATILE}


@pytest.mark.parametrize("path", PUT_PATHS, ids=[_key(p) for p in PUT_PATHS])
async def test_put_keeps_omitted_fields(client, world, factory, path: str):
    key = _key(path)
    recipe = PUT_RECIPES.get(key)
    if recipe is None:
        pytest.fail(f"no PUT recipe for {path}")
    env = Env(client, world, factory)
    if recipe.make is not None:
        url = await recipe.make(env)
    else:
        url = await RECIPES[key].make(env)
    rich = await recipe.rich(env, url)
    response = await client.patch(url, json=rich, headers=_headers(env))
    assert response.status_code == 200, response.text
    before = await _get(env, url)
    for field, _value in rich.items():
        assert field in before, field
    # Every field of the rich body took: the PUT below has something to lose.
    changed = {k for k, v in rich.items() if before[k] != v}
    assert not changed - {"name", "value", "answer", "question"}, (changed, before)

    # Without the required fields: 400 naming each, and nothing changes.
    response = await client.put(url, json={}, headers=_headers(env))
    if recipe.required:
        assert response.status_code == 400, response.text
        assert response.json() == {field: [REQUIRED] for field in recipe.required}
    else:
        assert response.status_code == 200, response.text
    assert await _get(env, url) == before

    # The required fields alone, as read: 200, and nothing changes.
    body = {field: before[field] for field in recipe.required}
    response = await client.put(url, json=body, headers=_headers(env))
    assert response.status_code == 200, response.text
    assert await _get(env, url) == before
