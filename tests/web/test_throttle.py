"""The login throttle counts the client, not the proxy in front of it (the same address as the
rate limits: ``kit.http.headers.client_address``), and every form that asks for the current
password is throttled like the login."""

from __future__ import annotations

import httpx
from sqlalchemy import select

from admit.models import UserTOTP
from tests.conftest import _no_server_errors
from tests.oauth.helpers import BASE, PASSWORD, csrf, login, make_totp


def behind_proxy(app, forwarded: str | None, peer: str = "127.0.0.1") -> httpx.AsyncClient:
    """A browser reaching the app through a proxy at ``peer`` that forwards its address."""
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    transport = httpx.ASGITransport(app=app, client=(peer, 50000))
    return httpx.AsyncClient(
        transport=transport,
        base_url=BASE,
        headers=headers,
        event_hooks={"response": [_no_server_errors]},
    )


async def test_failures_behind_a_proxy_count_per_client(clean_app, factory, monkeypatch):
    monkeypatch.setattr(clean_app.state.settings, "login_max_failures_per_ip", 4)
    users = [await factory.user(f"u{i}@example.org", password=PASSWORD) for i in range(4)]
    async with (
        behind_proxy(clean_app, "203.0.113.9") as attacker,
        behind_proxy(clean_app, "203.0.113.20") as someone,
        behind_proxy(clean_app, "203.0.113.9", peer="198.51.100.7") as spoofer,
    ):
        for user in users[:2]:
            for _ in range(2):
                assert (await login(attacker, user.email, "wrong")).status_code == 400
        # The attacker's address is throttled ...
        assert (await login(attacker, users[2].email)).status_code == 429
        # ... another client behind the same proxy is not (before: every login was locked).
        assert (await login(someone, users[3].email)).status_code == 303
        # A peer that is no trusted proxy cannot pick its address by a header: it is counted
        # as itself (not throttled here), and never as the forwarded victim's.
        assert (await login(spoofer, users[2].email)).status_code == 303


async def test_current_password_checks_are_throttled(web, factory, alice):
    # The test app allows 3 failures per account (ADMIT_LOGIN_MAX_FAILURES).
    await login(web, alice.email)
    page = await web.get("/settings/password/")
    data = {"csrf_token": csrf(page.text), "password": "a new password 1", "password2": ""}
    data["password2"] = data["password"]
    for _ in range(3):
        response = await web.post("/settings/password/", data={**data, "current": "guess"})
        assert response.status_code == 400 and "current password is wrong" in response.text
    # Now even the right password waits (guessing gets nowhere), and the login too.
    response = await web.post("/settings/password/", data={**data, "current": PASSWORD})
    assert response.status_code == 429, response.text
    assert int(response.headers["retry-after"]) > 0
    assert "Too many failed attempts" in response.text
    async with behind_proxy(web._transport.app, None, peer="192.0.2.1") as other:
        assert (await login(other, alice.email)).status_code == 429


async def test_turning_2fa_off_is_throttled(web, factory, alice):
    totp = await make_totp(factory, alice)
    response = await login(web, alice.email)
    assert response.headers["location"].startswith("/login/2fa")
    form = await web.get("/login/2fa")
    done = await web.post("/login/2fa", data={"csrf_token": csrf(form.text), "code": totp.now()})
    assert done.status_code == 303
    page = await web.get("/settings/2fa/")
    data = {"csrf_token": csrf(page.text), "action": "disable"}
    for _ in range(3):
        response = await web.post("/settings/2fa/", data={**data, "password": "guess"})
        assert response.status_code == 303
    response = await web.post("/settings/2fa/", data={**data, "password": PASSWORD})
    assert response.status_code == 429, response.text
    assert "Too many failed attempts" in response.text
    async with factory.sessionmaker() as session:
        assert (await session.execute(select(UserTOTP))).first() is not None  # still on
