"""Links are never built from an untrusted ``Host`` (``kit/http/hosts.py``): without
``ADMIT_BASE_URL`` a request whose host is not allowed is refused with 400 wherever it would
build a link — the password-reset mail above all (the attack: the real user is mailed a reset
link to the attacker's host)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from admit.app import create_app
from admit.config import Settings
from admit.models import OutgoingMail, TeamInvite
from tests.factories import World, auth
from tests.oauth.helpers import PASSWORD, csrf


@pytest.fixture(scope="module")
async def app(database_url: str, tmp_path_factory: pytest.TempPathFactory):
    """An app as ``make run`` starts it: no ADMIT_BASE_URL, the default allowed hosts."""
    data_dir: Path = tmp_path_factory.mktemp("hosts-data")
    application = create_app(Settings(data_dir=data_dir, database_url=database_url))
    yield application
    await application.state.db.dispose()


@pytest.fixture
async def browser(clean_app):
    transport = httpx.ASGITransport(app=clean_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as c:
        yield c


async def mails(factory) -> list[OutgoingMail]:
    async with factory.sessionmaker() as session:
        return list(
            (await session.execute(select(OutgoingMail).order_by(OutgoingMail.id))).scalars()
        )


async def test_a_forged_host_gets_no_reset_link(browser, factory):
    alice = await factory.user("alice@example.org", password=PASSWORD)
    form = await browser.get("/password-reset")
    assert form.status_code == 200
    data = {"csrf_token": csrf(form.text), "email": alice.email}
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil"):
        response = await browser.post("/password-reset", data=data, headers={"Host": host})
        assert response.status_code == 400, (host, response.text)
        # A page, as a person reads it (the API answers the same refusal as JSON).
        assert response.headers["content-type"].startswith("text/html")
        assert "ADMIT_BASE_URL or ADMIT_ALLOWED_HOSTS" in response.text
    # The same answer for an address without an account (the form tells nobody which exist).
    unknown = await browser.post(
        "/password-reset", data={**data, "email": "no@example.org"}, headers={"Host": "evil.ex"}
    )
    assert unknown.status_code == 400
    assert await mails(factory) == []
    # The loopback names make run uses (any port) are allowed; the link keeps the host.
    for host in ("127.0.0.1:8000", "localhost:8080", "[::1]:8000", "LOCALHOST"):
        response = await browser.post("/password-reset", data=data, headers={"Host": host})
        assert response.status_code == 200, (host, response.text)
    links = [m.body.split("http://", 1)[1].split("/", 1)[0] for m in await mails(factory)]
    assert links == ["127.0.0.1:8000", "localhost:8080", "[::1]:8000", "LOCALHOST"]


async def test_api_links_need_an_allowed_host(browser, factory, world: World):
    headers = auth(world.admin)
    team = (await browser.get("/api/v1/organizers/acme/teams/", headers=headers)).json()
    team_id = team["results"][0]["id"]
    invites = f"/api/v1/organizers/acme/teams/{team_id}/invites/"
    evil = {**headers, "Host": "evil.example"}
    response = await browser.post(invites, json={"email": "new@example.org"}, headers=evil)
    assert response.status_code == 400, response.text
    async with factory.sessionmaker() as session:
        assert (await session.execute(select(TeamInvite))).first() is None
    assert await mails(factory) == []
    assert (await browser.get("/api/v1/organizers/", headers=evil)).status_code == 400
    assert (await browser.get("/api/v1/organizers/acme/", headers=evil)).status_code == 400
    # Endpoints that build no link do not care.
    events = await browser.get("/api/v1/organizers/acme/events/summit/quotas/1/", headers=evil)
    assert events.status_code in (200, 404)
    response = await browser.post(invites, json={"email": "new@example.org"}, headers=headers)
    assert response.status_code == 201, response.text
    (mail,) = await mails(factory)
    assert "http://127.0.0.1:8000/invite/" in mail.body


async def test_allowed_hosts_and_base_url(browser, clean_app, factory, monkeypatch):
    alice = await factory.user("alice@example.org", password=PASSWORD)
    form = await browser.get("/password-reset")
    data = {"csrf_token": csrf(form.text), "email": alice.email}
    settings = clean_app.state.settings
    monkeypatch.setattr(settings, "allowed_hosts", "tickets.example.org, [2001:db8::1]")
    clean_app.state.allowed_hosts = None  # built again from the settings
    ok = {"Host": "tickets.example.org:8443"}
    assert (await browser.post("/password-reset", data=data, headers=ok)).status_code == 200
    # The loopback defaults are replaced by the list.
    for host in ("127.0.0.1:8000", "evil.example"):
        refused = await browser.post("/password-reset", data=data, headers={"Host": host})
        assert refused.status_code == 400
    # With a base URL its host is allowed and every link is built from it, whatever the Host.
    monkeypatch.setattr(settings, "base_url", "https://shop.example.com/")
    clean_app.state.allowed_hosts = None  # built again from the settings
    for host in ("shop.example.com", "evil.example"):
        response = await browser.post("/password-reset", data=data, headers={"Host": host})
        assert response.status_code == 200
    bodies = [m.body for m in await mails(factory)]
    assert "http://tickets.example.org:8443/password-reset/" in bodies[0]
    assert all("https://shop.example.com/password-reset/" in b for b in bodies[1:])
    assert len(bodies) == 3
    clean_app.state.allowed_hosts = None


async def test_an_order_with_a_forged_host_is_refused_before_it_is_written(
    browser, factory, world: World
):
    """Order creation answers the buyer's page URL (and mails it): a Host it may not be built
    from is refused before the order exists — on the rush lane (PostgreSQL) as on the general
    path, never a 400 for an order that was placed anyway."""
    from admit.models import Order
    from tests.orders import helpers as orders

    ticket = await orders.item(factory, world.event)
    headers = {**auth(world.admin), "Host": "evil.example"}
    for _ in range(3):  # the lane takes over once the event's copy is warm
        response = await browser.post(
            orders.url(world), json=orders.body(ticket.id), headers=headers
        )
        assert response.status_code == 400, response.text
    async with factory.sessionmaker() as session:
        assert (await session.execute(select(Order))).first() is None
    assert await mails(factory) == []
    ok = await browser.post(
        orders.url(world), json=orders.body(ticket.id), headers=auth(world.admin)
    )
    assert ok.status_code == 201, ok.text
    assert ok.json()["url"].startswith("http://127.0.0.1:8000/acme/summit/order/")
