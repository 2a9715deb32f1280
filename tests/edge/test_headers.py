"""Security headers and the request id on every answer: the framework's (API, errors, pages,
docs, static files) and the fast lane's (carts and redeem, PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from admit.kit.http.headers import DOCS_CSP, HTML_CSP
from tests.carts import helpers as carts
from tests.checkin import helpers as checkin
from tests.edge.helpers import LaneSpy, client_for, edge_app
from tests.factories import Factory, World, auth

HSTS = "max-age=31536000; includeSubDomains"


def assert_secured(response: httpx.Response) -> None:
    assert response.headers["x-content-type-options"] == "nosniff", response.headers
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-request-id"]
    for name in ("x-content-type-options", "referrer-policy", "x-request-id"):
        assert len(response.headers.get_list(name)) == 1, (name, response.headers)


async def test_api_answers_and_errors_carry_the_headers(client, world: World):
    org = world.org.slug
    answers = [
        await client.get(f"/api/v1/organizers/{org}/events/", headers=auth(world.admin)),
        await client.get(f"/api/v1/organizers/{org}/events/"),  # 401
        await client.get(f"/api/v1/organizers/{org}/events/nope/", headers=auth(world.admin)),
        await client.post(
            f"/api/v1/organizers/{org}/events/", content=b"{", headers=auth(world.admin)
        ),
        await client.delete("/api/v1/organizers/"),  # 405
        await client.get("/no/such/page"),
    ]
    assert [r.status_code for r in answers] == [200, 401, 403, 400, 405, 404]
    for response in answers:
        assert_secured(response)
        assert "content-security-policy" not in response.headers  # JSON, not a page
        assert "strict-transport-security" not in response.headers  # plain HTTP


async def test_pages_keep_their_policy_and_others_get_one(client):
    page = await client.get("/login")
    assert page.status_code == 200
    assert_secured(page)
    # The page's own headers stand, not doubled.
    assert page.headers.get_list("content-security-policy") == [
        "default-src 'self'; script-src 'none'; frame-ancestors 'none'; base-uri 'none'"
    ]
    assert page.headers.get_list("x-frame-options") == ["DENY"]

    docs = await client.get("/api/v1/docs")
    assert docs.status_code == 200 and docs.headers["content-type"].startswith("text/html")
    assert docs.headers["content-security-policy"] == DOCS_CSP.decode()
    assert docs.headers["x-frame-options"] == "DENY"
    assert_secured(docs)

    css = await client.get("/static/admit.css")
    assert_secured(css)
    assert "content-security-policy" not in css.headers


async def test_html_without_its_own_policy_gets_the_strict_one(clean_app):
    from starlette.responses import HTMLResponse

    async def bare_page() -> HTMLResponse:
        return HTMLResponse("<p>hi</p>")

    clean_app.add_api_route("/_edge_test_page", bare_page)
    try:
        async with client_for(clean_app) as client:
            response = await client.get("/_edge_test_page")
    finally:
        clean_app.router.routes.pop()
    assert response.headers["content-security-policy"] == HTML_CSP.decode()
    assert response.headers["x-frame-options"] == "DENY"


async def test_hsts_over_tls_and_from_a_trusted_proxy_only(database_url: str, tmp_path: Path):
    async with edge_app(database_url, tmp_path, trusted_proxies="10.0.0.0/8") as app:
        async with client_for(app, base_url="https://testserver") as tls:
            assert (await tls.get("/healthz")).headers["strict-transport-security"] == HSTS
        async with client_for(app, ip="10.1.2.3") as proxied:
            said = await proxied.get("/healthz", headers={"X-Forwarded-Proto": "https"})
            assert said.headers["strict-transport-security"] == HSTS
            plain = await proxied.get("/healthz", headers={"X-Forwarded-Proto": "http"})
            assert "strict-transport-security" not in plain.headers
        async with client_for(app, ip="192.0.2.9") as stranger:
            # Anybody can send the header; only a trusted proxy is believed.
            lie = await stranger.get("/healthz", headers={"X-Forwarded-Proto": "https"})
            assert "strict-transport-security" not in lie.headers
    async with edge_app(database_url, tmp_path, hsts_seconds=0) as app:
        async with client_for(app, base_url="https://testserver") as tls:
            response = await tls.get("/healthz")
            assert "strict-transport-security" not in response.headers
            assert_secured(response)


@pytest.fixture
def lane(clean_app, monkeypatch: pytest.MonkeyPatch) -> LaneSpy:
    if not clean_app.state.db.fast.native:
        pytest.skip("the fast lane serves on PostgreSQL only")
    return LaneSpy(monkeypatch)


async def test_lane_answers_carry_the_headers(client, world: World, factory: Factory, lane):
    ticket = await carts.item(factory, world.event)
    await carts.quota(factory, world.event, 10, [ticket])
    cart = await carts.post(client, world, {"item": ticket.id, "price": "23.00"})
    assert cart.status_code == 201, cart.text
    assert lane.count("/cartpositions/") == 1
    assert_secured(cart)

    item = await checkin.ticket(factory, world.event)
    clist = await checkin.checkin_list(factory, world.event)
    _order, positions = await checkin.order(factory, world.event, item)
    token, _device = await checkin.device(factory, world.org)
    first = await checkin.redeem(
        client, world, positions[0].secret, [clist.id], headers=checkin.device_auth(token)
    )
    again = await checkin.redeem(
        client, world, positions[0].secret, [clist.id], headers=checkin.device_auth(token)
    )
    assert first.json()["status"] == "ok" and again.json()["status"] == "error"
    assert lane.count("/redeem/") == 2
    for response in (first, again):
        assert_secured(response)
    assert first.headers["x-request-id"] != again.headers["x-request-id"]
