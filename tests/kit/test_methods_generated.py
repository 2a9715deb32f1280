"""HTTP behaviour every route shares, generated from the routes so a new one cannot skip it:
``HEAD`` answers as ``GET`` without a body, ``OPTIONS`` names the route's methods in ``Allow``,
unknown ``ordering`` names are ignored on every list (as the reference ignores them), and the
trailing-slash redirect keeps the client on the host and port it used."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from admit.app import LANE
from admit.kit.http.routing import API_PREFIX
from tests.factories import World, auth
from tests.routes import METHODS, client, factory, openapi_document, world  # noqa: F401

GET_PATHS = sorted(p for p, methods in METHODS.items() if "GET" in methods)
PATHS = sorted(METHODS)
# The GET lanes in front of the framework (kit/lanes/fastlane.py): HEAD must reach them too.
LANE_GETS = sorted(route.template for route in LANE.routes if route.method == "GET")


def _url(path: str, world: World) -> str:
    path = path.replace("{organizer}", world.org.slug).replace("{event}", world.event.slug)
    return re.sub(r"{\w+}", "1", path)


# Stamped with the time of the request (the change-polling stamp of order lists).
TIMED = frozenset({"date", "x-page-generated"})


def _stable(first: httpx.Response, second: httpx.Response) -> dict[str, str]:
    """The headers two identical GETs agree on (a request id and a rate-limit countdown
    change from one request to the next)."""
    return {k: v for k, v in first.headers.items() if second.headers.get(k) == v and k not in TIMED}


async def _head_matches_get(client: httpx.AsyncClient, url: str, token: str) -> httpx.Response:
    headers = auth(token)
    first = await client.get(url, headers=headers)
    head = await client.head(url, headers=headers)
    second = await client.get(url, headers=headers)
    assert ("x-page-generated" in head.headers) == ("x-page-generated" in first.headers)
    assert head.status_code == first.status_code, (url, head.status_code, head.text)
    assert head.content == b""
    stable = _stable(first, second)
    assert stable, url
    assert {k: head.headers.get(k) for k in stable} == stable, url
    if "content-length" in first.headers:
        assert head.headers["content-length"] == first.headers["content-length"]
    return first


@pytest.mark.parametrize("path", GET_PATHS)
async def test_head_answers_as_get_without_a_body(client, world: World, path: str):
    await _head_matches_get(client, _url(path, world), world.admin)


@pytest.mark.parametrize("template", LANE_GETS)
async def test_head_on_the_fast_lanes(client, world: World, template: str):
    response = await _head_matches_get(client, _url(template, world), world.admin)
    assert response.status_code in (200, 404), response.text


async def test_head_of_a_list_has_its_length_and_no_body(client, world: World):
    url = f"{API_PREFIX}/organizers/{world.org.slug}/events/"
    response = await _head_matches_get(client, url, world.admin)
    assert response.status_code == 200
    assert int(response.headers["content-length"]) == len(response.content) > 0


@pytest.mark.parametrize("path", PATHS)
async def test_options_names_the_methods_of_the_route(client, world: World, path: str):
    response = await client.options(_url(path, world))
    assert response.status_code in (200, 204), response.text
    allowed = {m.strip() for m in response.headers["allow"].split(",")}
    expected = METHODS[path] | {"OPTIONS"} | ({"HEAD"} if "GET" in METHODS[path] else set())
    assert allowed == expected
    assert response.content == b""


@pytest.mark.parametrize("path", [p for p in PATHS if "DELETE" not in METHODS[p]][:40])
async def test_a_405_names_the_methods_options_names(client, world: World, path: str):
    url = _url(path, world)
    refused = await client.delete(url, headers=auth(world.admin))
    if refused.status_code == 404 and path.endswith(("bulk_create/", "bulk_block/")):
        pytest.skip("the detail route's {id} takes this name for DELETE (an unknown id: 404)")
    assert refused.status_code == 405, refused.text
    assert refused.headers["allow"] == (await client.options(url)).headers["allow"]


async def test_options_on_an_unknown_path_is_404(client):
    response = await client.options(f"{API_PREFIX}/no-such-thing/")
    assert response.status_code == 404
    assert response.json() == {"detail": "Not Found"} or set(response.json()) == {"detail"}


def _list_operations() -> list[tuple[str, list[str]]]:
    found = []
    for path, operations in openapi_document()["paths"].items():
        get = operations.get("get")
        if get is None:
            continue
        for param in get.get("parameters", []):
            if param["name"] == "ordering" and param["in"] == "query":
                found.append((path, param["x-ordering-fields"]))
    return sorted(found)


LISTS = _list_operations()


def test_lists_with_an_ordering_are_found():
    assert len(LISTS) > 20


@pytest.mark.parametrize(("path", "fields"), LISTS, ids=[p for p, _ in LISTS])
async def test_unknown_ordering_is_ignored(client, world: World, path: str, fields: list[str]):
    url = _url(path, world)
    headers = auth(world.admin)

    async def results(ordering: str | None) -> tuple[int, object]:
        params = {"ordering": ordering} if ordering is not None else {}
        response = await client.get(url, params=params, headers=headers)
        body = response.json()
        return response.status_code, body.get("results", body)

    default = await results(None)
    # 400 only for a required filter this generic call does not send (never the ordering).
    assert default[0] in (200, 400, 404), (url, default)
    assert "ordering" not in str(default[1]), default
    assert await results("no_such_field") == default
    assert await results("-no_such_field,also(bogus)") == default
    field = fields[0]
    assert await results(f"-nope,-{field},x") == await results(f"-{field}")


@pytest.mark.parametrize("host", ["example.org:8443", "example.org", "127.0.0.1:8000"])
async def test_trailing_slash_redirect_stays_on_the_clients_host(client, world: World, host):
    """Behind a proxy the server's idea of scheme, host and port can differ from the
    client's: the redirect is relative, so it resolves against the URL the client used."""
    path = f"{API_PREFIX}/organizers/{world.org.slug}/events"
    response = await client.get(f"{path}?page_size=1", headers={**auth(world.admin), "host": host})
    assert response.status_code in (301, 302, 307, 308)
    location = response.headers["location"]
    assert urlsplit(location).netloc == "" and urlsplit(location).scheme == "", location
    used = f"https://{host}{path}?page_size=1"
    assert urljoin(used, location) == f"https://{host}{path}/?page_size=1"
    followed = await client.get(urljoin(used, location), headers=auth(world.admin))
    assert followed.status_code == 200


async def test_slash_redirect_also_removes_an_extra_slash(client, world: World):
    path = f"{API_PREFIX}/openapi.json/"
    response = await client.get(path)
    assert response.status_code == 307
    assert response.headers["location"] == f"{API_PREFIX}/openapi.json"


async def test_a_path_no_spelling_matches_is_still_404(client):
    response = await client.get(f"{API_PREFIX}/organizers/x/nothing-here")
    assert response.status_code in (403, 404)
