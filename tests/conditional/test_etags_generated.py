"""ETags round-trip on every detail route, enumerated from the routers (as the access tests
do), so a new detail route without a recipe in ``recipes.py`` fails here.

For each: a GET carries a strong ETag (the hash of its body); ``If-None-Match`` with it gives
304 with no body and the same ETag; a stale ``If-Match`` on every write method gives 412
``{"detail": …}`` and changes nothing; after a change the old ETag matches no more; with the
current ETag PATCH, PUT and DELETE go through.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from fastapi.routing import APIRoute

from admit.app import API_ROUTERS
from admit.kit.http.conditional import PRECONDITION_FAILED, is_detail_path
from admit.kit.http.routing import API_PREFIX
from tests.conditional.recipes import RECIPES, Env

ORG = f"{API_PREFIX}/organizers/{{organizer}}"
STALE = '"00000000000000000000000000000000"'


def _detail_routes() -> list[tuple[str, frozenset[str]]]:
    methods: dict[str, set[str]] = {}
    for router in API_ROUTERS:
        for route in router.routes:
            assert isinstance(route, APIRoute)
            methods.setdefault(route.path, set()).update(route.methods)
    return sorted(
        (path, frozenset(found - {"GET"}))
        for path, found in methods.items()
        if "GET" in found and is_detail_path(path)
    )


DETAIL = _detail_routes()


def _key(path: str) -> str:
    return path.removeprefix(ORG) if path.startswith(ORG) else path


def test_every_detail_route_has_a_recipe():
    missing = [path for path, _ in DETAIL if _key(path) not in RECIPES]
    assert not missing, f"detail routes without a recipe in tests/conditional/recipes.py: {missing}"
    assert len(DETAIL) > 30


def _headers(env: Env, **extra: str) -> dict[str, str]:
    bearer = env.cache.get("bearer")  # scheduled exports belong to a user
    return {**({"Authorization": f"Bearer {bearer}"} if bearer else env.h), **extra}


async def _get(env: Env, url: str, **headers: str) -> Any:
    return await env.client.get(url, headers=_headers(env, **headers))


@pytest.mark.parametrize(("path", "writes"), DETAIL, ids=[p for p, _ in DETAIL])
async def test_etag_round_trip(client, world, factory, path: str, writes: frozenset[str]):
    recipe = RECIPES.get(_key(path))
    if recipe is None:
        pytest.fail(f"no recipe for {path}")
    env = Env(client, world, factory)
    url = await recipe.make(env)

    first = await _get(env, url)
    assert first.status_code == 200, first.text
    etag = first.headers["etag"]
    digest = hashlib.blake2b(first.content, digest_size=16).hexdigest()
    assert etag == f'"{digest}"'  # strong: the exact bytes

    again = await _get(env, url, **{"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    assert (await _get(env, url, **{"If-None-Match": f"W/{etag}"})).status_code == 304
    assert (await _get(env, url, **{"If-None-Match": STALE})).status_code == 200

    for method in sorted(writes):
        body = None if method == "DELETE" else (recipe.patch or {})
        response = await env.client.request(
            method, url, json=body, headers=_headers(env, **{"If-Match": STALE})
        )
        assert response.status_code == 412, (method, response.text)
        assert response.json() == {"detail": PRECONDITION_FAILED}
        unchanged = await _get(env, url)
        assert unchanged.headers["etag"] == etag, method
        assert unchanged.content == first.content

    if recipe.static:
        assert not writes, path
        return
    if "PATCH" in writes:
        assert recipe.patch is not None, f"{path}: a recipe of a PATCH route needs a patch body"
        response = await env.client.patch(
            url, json=recipe.patch, headers=_headers(env, **{"If-Match": etag})
        )
        assert response.status_code == 200, response.text
        # The old ETag is now stale for writes too.
        response = await env.client.patch(
            url, json=recipe.patch, headers=_headers(env, **{"If-Match": etag})
        )
        assert response.status_code == 412, response.text
    else:
        assert recipe.change is not None, f"{path}: a recipe of a read-only route needs change"
        await recipe.change(env, url)

    changed = await _get(env, url, **{"If-None-Match": etag})
    assert changed.status_code == 200, changed.text
    current = changed.headers["etag"]
    assert current != etag

    if "PUT" in writes:
        body = recipe.put(changed.json())
        response = await env.client.put(
            url, json=body, headers=_headers(env, **{"If-Match": current})
        )
        assert response.status_code == 200, response.text
        current = (await _get(env, url)).headers["etag"]

    if "DELETE" in writes:
        response = await env.client.delete(url, headers=_headers(env, **{"If-Match": current}))
        assert response.status_code == recipe.delete_status, response.text
