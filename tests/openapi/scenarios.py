"""Requests that make every operation answer, each scenario on a fresh World.

``crud`` walks every recipe of ``tests/conditional/recipes.py`` (create, detail, list, PATCH,
PUT, DELETE); ``actions.py`` holds the operations no recipe reaches (state changes, check-in,
payments, jobs and their downloads, devices, OAuth); ``public_actions.py`` walks the shop's
headless checkout as a buyer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from tests.conditional.recipes import RECIPES, Env, Recipe
from tests.openapi import actions, public_actions

Scenario = Callable[[Env], Awaitable[None]]


def headers(env: Env) -> dict[str, str]:
    bearer = env.cache.get("bearer")  # scheduled exports belong to a user
    return {"Authorization": f"Bearer {bearer}"} if bearer else env.h


# PUT bodies where the representation cannot be sent back as it is.
PUT_BODIES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    # A team shows its permissions in both the current and the deprecated attributes.
    "/teams/{id}/": lambda body: {"name": body["name"]},
}


def _crud(key: str, recipe: Recipe) -> Scenario:
    async def scenario(env: Env) -> None:
        url = await recipe.make(env)
        h = headers(env)
        detail = await env.client.get(url, headers=h)
        assert detail.status_code == 200, (url, detail.text)
        collection = url.rstrip("/").rsplit("/", 1)[0] + "/"
        if not key.endswith("/{list}/positions/{id}/"):
            await env.client.get(collection, headers=h, params={"ordering": "-id"})
            await env.client.get(collection, headers=h)
            await env.client.get(collection, headers=h, params={"page": "9"})
        if recipe.patch is not None:
            response = await env.client.patch(url, json=recipe.patch, headers=h)
            assert response.status_code == 200, (url, response.text)
            await env.client.patch(url, json={"name": [1, 2]}, headers=h)
        current = (await env.client.get(url, headers=h)).json()
        body = PUT_BODIES.get(key, recipe.put)(current)
        put = await env.client.put(url, json=body, headers=h)
        assert put.status_code in (200, 405), (url, put.text)
        await env.client.delete(url, headers=h)

    scenario.__name__ = f"crud {key}"
    return scenario


SCENARIOS: list[Scenario] = [
    *(_crud(key, recipe) for key, recipe in RECIPES.items()),
    *actions.SCENARIOS,
    *public_actions.SCENARIOS,
]
