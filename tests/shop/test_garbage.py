"""The headless checkout fed bodies and paths of the wrong shape: every public route answers a
4xx in the documented shape (never a 5xx, never FastAPI's 422), on a live shop, so the
validation past the event lookup is what is reached."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from admit.models import Organizer
from admit.shop.routes import PUBLIC_ROUTERS
from tests.shop import helpers as h
from tests.test_garbage_bodies import GARBAGE

BAD_IDS = {"{cart_id}": "x" * 300, "{position}": "99999999999", "{code}": "A'B", "{secret}": "%00"}
# Every writing route, and every reading route that names something (a GET of the event or
# its catalog has nothing to get wrong).
ROUTES = sorted(
    (method, route.path)  # type: ignore[attr-defined]
    for router in PUBLIC_ROUTERS
    for route in router.routes
    for method in route.methods  # type: ignore[attr-defined]
    if method != "GET" or any(name in route.path for name in BAD_IDS)  # type: ignore[attr-defined]
)


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
async def test_public_routes_refuse_garbage_with_a_4xx(client, world, factory, method, path):
    await h.setup(factory, world)
    async with factory.sessionmaker() as s:  # the customer routes past their 404
        await s.execute(update(Organizer).values(settings={"customer_accounts": True}))
        await s.commit()
    url = path.replace("{organizer}", world.org.slug).replace("{event}", world.event.slug)
    for name, bad in BAD_IDS.items():
        url = url.replace(name, bad)
    bodies = GARBAGE if method in ("POST", "PUT", "PATCH") else [None]
    for body in bodies:
        response = await client.request(method, url, json=body)
        assert 400 <= response.status_code < 500, (body, response.status_code, response.text)
        assert response.status_code != 422, (body, response.text)
        assert isinstance(response.json(), dict), response.text
