"""``GET E/`` in the fast lane (``events/detail_lane.py``, PostgreSQL): the same answer as the
framework's route (body, ETag, headers), the same refusals (left to the framework), the body
rendered once per distinct row and never stale: a write by another worker (straight to the
database here) shows at the next read."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import select

from admit import app as app_module
from admit.events import detail_lane, service
from admit.models import Event
from tests.factories import Factory, World, auth

URL = "/api/v1/organizers/acme/events/summit/"


@pytest.fixture
def lane(clean_app: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The lane's route, with a count of what it answered and a switch to turn it off."""
    if not clean_app.state.db.fast.native:
        pytest.skip("the fast lane runs on PostgreSQL")
    [route] = [r for r in app_module.LANE.routes if r.template.endswith(detail_lane.PATH)]
    state: dict[str, Any] = {"answered": 0, "off": False, "rendered": 0}
    handler = route.handler

    async def spy(request: Any) -> Any:
        if state["off"]:
            return None
        response = await handler(request)
        state["answered"] += response is not None
        return response

    monkeypatch.setattr(route, "handler", spy)
    render = service.event_to_read

    def counted(*args: Any) -> Any:
        state["rendered"] += 1
        return render(*args)

    monkeypatch.setattr(service, "event_to_read", counted)
    detail_lane._kept.clear()
    return state


def _headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k not in ("date", "x-request-id")}


async def test_the_lane_answers_as_the_route(
    client: httpx.AsyncClient, world: World, lane: dict[str, Any]
) -> None:
    h = auth(world.admin)
    served = await client.get(URL, headers=h)
    assert served.status_code == 200 and lane["answered"] == 1
    lane["off"] = True
    framework = await client.get(URL, headers=h)
    lane["off"] = False
    assert served.content == framework.content
    assert _headers(served) == _headers(framework)
    assert served.headers["etag"]
    # The ETag holds on the lane too: 304 without a body.
    again = await client.get(URL, headers={**h, "If-None-Match": served.headers["etag"]})
    assert again.status_code == 304 and again.content == b"" and lane["answered"] == 2


async def test_refusals_are_the_framework_s(
    client: httpx.AsyncClient, world: World, factory: Factory, lane: dict[str, Any]
) -> None:
    h = auth(world.admin)
    assert (await client.get(URL, headers={"Authorization": "Token nope"})).status_code == 401
    assert (await client.get(URL)).status_code == 401
    other = "/api/v1/organizers/rival/events/expo/"
    assert (await client.get(other, headers=h)).status_code == 403
    missing = "/api/v1/organizers/acme/events/nothing/"
    assert (await client.get(missing, headers=h)).status_code == 403
    assert lane["answered"] == 0
    # A team limited to another event of the organizer may not read this one.
    elsewhere = await factory.event(world.org, "elsewhere")
    team = await factory.team(world.org, all_events=False, events=[elsewhere])
    token = await factory.token(team)
    limited = {"Authorization": f"Token {token}"}
    assert (await client.get(URL, headers=limited)).status_code == 403
    ok = await client.get("/api/v1/organizers/acme/events/elsewhere/", headers=limited)
    assert ok.status_code == 200 and ok.json()["slug"] == "elsewhere"
    assert lane["answered"] == 1


async def test_rendered_once_per_row_and_never_stale(
    client: httpx.AsyncClient, world: World, factory: Factory, lane: dict[str, Any]
) -> None:
    h = auth(world.admin)
    first = await client.get(URL, headers=h)
    for _ in range(3):
        assert (await client.get(URL, headers=h)).content == first.content
    assert lane["rendered"] == 1 and lane["answered"] == 4
    # Another worker's write: straight to the database, this worker's caches untouched.
    async with factory.sessionmaker() as session:
        event = (await session.scalars(select(Event).where(Event.slug == "summit"))).one()
        event.name = {"en": "Renamed", "de": "Umbenannt"}
        await session.commit()
    renamed = await client.get(URL, headers=h)
    assert renamed.json()["name"] == {"en": "Renamed", "de": "Umbenannt"}
    assert lane["rendered"] == 2
    # A write through the API shows at once too.
    patched = await client.patch(URL, json={"location": {"en": "Hall 2"}}, headers=h)
    assert patched.status_code == 200, patched.text
    after = await client.get(URL, headers=h)
    assert after.json()["location"] == {"en": "Hall 2"}
    lane["off"] = True
    assert (await client.get(URL, headers=h)).content == after.content
    lane["off"] = False
