"""Login with a second factor, throttling, CSRF, logout, team-required 2FA, password change
and reset by mail."""

from __future__ import annotations

import re

import pyotp
from sqlalchemy import select

from admit.models import OutgoingMail, User
from tests.oauth.helpers import PASSWORD, csrf, login, make_totp


async def test_login_and_logout(web, alice):
    response = await login(web, alice.email)
    assert response.status_code == 303 and response.headers["location"] == "/settings/"
    page = await web.get("/settings/")
    assert page.status_code == 200 and alice.email in page.text
    assert page.headers["x-frame-options"] == "DENY"
    assert "script-src 'none'" in page.headers["content-security-policy"]
    cookie = page.headers.get("set-cookie") or ""
    assert "httponly" in (await web.get("/login")).headers.get("set-cookie", "httponly").lower()
    assert "admit_session" not in cookie or "samesite=lax" in cookie.lower()
    logout = await web.get("/logout")
    response = await web.post("/logout", data={"csrf_token": csrf(logout.text)})
    assert response.status_code == 303
    assert (await web.get("/settings/")).status_code == 303  # back to the login


async def test_wrong_password_and_unknown_user(web, alice):
    response = await login(web, alice.email, "wrong password")
    assert response.status_code == 400 and "Wrong e-mail address or password" in response.text
    response = await login(web, "nobody@example.org")
    assert response.status_code == 400 and "Wrong e-mail address or password" in response.text


async def test_forms_without_csrf_token_are_403(web, alice):
    await web.get("/login")
    response = await web.post("/login", data={"email": alice.email, "password": PASSWORD})
    assert response.status_code == 403
    assert "text/html" in response.headers["content-type"]
    assert "CSRF" in response.text
    response = await web.post(
        "/login", data={"csrf_token": "forged", "email": alice.email, "password": PASSWORD}
    )
    assert response.status_code == 403
    await login(web, alice.email)
    for url in ("/logout", "/settings/password/", "/settings/apps/new", "/settings/2fa/"):
        assert (await web.post(url, data={})).status_code == 403, url
    # Still logged in: nothing happened.
    assert (await web.get("/settings/")).status_code == 200


async def test_login_throttled_per_account(web, factory, alice):
    # The test app allows 3 failures per account (ADMIT_LOGIN_MAX_FAILURES).
    for _ in range(3):
        assert (await login(web, alice.email, "wrong")).status_code == 400
    response = await login(web, alice.email)  # even the right password now waits
    assert response.status_code == 429
    assert int(response.headers["retry-after"]) > 0
    assert "Too many failed attempts" in response.text
    # Other accounts from elsewhere are not affected.
    bob = await factory.user("bob@example.org", password=PASSWORD)
    assert (await login(web, bob.email)).status_code == 303


async def test_login_throttled_per_address(web, factory, clean_app, monkeypatch):
    monkeypatch.setattr(clean_app.state.settings, "login_max_failures_per_ip", 4)
    users = [await factory.user(f"u{i}@example.org", password=PASSWORD) for i in range(3)]
    for user in users[:2]:
        for _ in range(2):
            assert (await login(web, user.email, "wrong")).status_code == 400
    assert (await login(web, users[2].email)).status_code == 429


async def test_login_with_totp(web, factory, alice):
    totp = await make_totp(factory, alice)
    response = await login(web, alice.email)
    assert response.status_code == 303 and response.headers["location"].startswith("/login/2fa")
    assert (await web.get("/settings/")).status_code == 303  # not logged in yet
    page = await web.get("/login/2fa")
    wrong = await web.post("/login/2fa", data={"csrf_token": csrf(page.text), "code": "000000"})
    assert wrong.status_code == 400
    code = totp.now()
    ok = await web.post("/login/2fa", data={"csrf_token": csrf(page.text), "code": code})
    assert ok.status_code == 303
    assert (await web.get("/settings/")).status_code == 200


async def test_totp_code_is_good_once(web, factory, alice, clean_app):
    totp = await make_totp(factory, alice)
    code = totp.now()
    await login(web, alice.email)
    page = await web.get("/login/2fa")
    assert (
        await web.post("/login/2fa", data={"csrf_token": csrf(page.text), "code": code})
    ).status_code == 303
    await web.post("/logout", data={"csrf_token": csrf((await web.get("/logout")).text)})
    await login(web, alice.email)
    page = await web.get("/login/2fa")
    replay = await web.post("/login/2fa", data={"csrf_token": csrf(page.text), "code": code})
    assert replay.status_code == 400


async def test_team_requiring_2fa_forces_setup(web, factory, world, alice):
    team = await factory.team(world.org, members=[alice])
    async with factory.sessionmaker() as session:
        from admit.models import Team

        (await session.get(Team, team.id)).require_2fa = True
        await session.commit()
    response = await login(web, alice.email)
    assert response.headers["location"].startswith("/settings/2fa/")
    # Every other page leads to the setup first.
    assert (await web.get("/settings/apps/")).headers["location"].startswith("/settings/2fa/")
    page = await web.get("/settings/2fa/")
    secret = re.search(r'<code id="totp-secret">([A-Z2-7]+)</code>', page.text).group(1)
    response = await web.post(
        "/settings/2fa/",
        data={"csrf_token": csrf(page.text), "action": "enable", "code": pyotp.TOTP(secret).now()},
    )
    assert response.status_code == 303
    assert (await web.get("/settings/apps/")).status_code == 200
    async with factory.sessionmaker() as session:
        assert (await session.get(User, alice.id)).require_2fa is True
    # The team member API reports it.
    members = await web.get(
        f"/api/v1/organizers/{world.org.slug}/teams/{team.id}/members/",
        headers={"Authorization": f"Token {await factory.admin_token(world.org)}"},
    )
    assert members.json()["results"][0]["require_2fa"] is True


async def test_password_change_ends_other_sessions(web, api, alice):
    await login(web, alice.email)
    # A second session (another browser).
    api.cookies.clear()
    await login(api, alice.email)
    assert (await api.get("/settings/")).status_code == 200
    page = await web.get("/settings/password/")
    data = {"csrf_token": csrf(page.text), "current": PASSWORD}
    short = await web.post("/settings/password/", data={**data, "password": "x", "password2": "x"})
    assert short.status_code == 400
    new = "a much better password"
    done = await web.post("/settings/password/", data={**data, "password": new, "password2": new})
    assert done.status_code == 303
    assert (await web.get("/settings/")).status_code == 200
    assert (await api.get("/settings/")).status_code == 303  # logged out


async def test_password_reset_by_mail(web, factory, alice):
    page = await web.get("/password-reset")
    response = await web.post(
        "/password-reset", data={"csrf_token": csrf(page.text), "email": alice.email}
    )
    assert response.status_code == 200
    unknown = await web.post(
        "/password-reset", data={"csrf_token": csrf(page.text), "email": "no@example.org"}
    )
    assert unknown.text.count("If an account exists") == 1
    async with factory.sessionmaker() as session:
        mails = (await session.execute(select(OutgoingMail))).scalars().all()
    assert [m.to for m in mails] == [[alice.email]]
    link = re.search(r"http://127\.0\.0\.1(/password-reset/[^/\s]+/)", mails[0].body).group(1)
    form = await web.get(link)
    new = "another good password"
    done = await web.post(
        link, data={"csrf_token": csrf(form.text), "password": new, "password2": new}
    )
    assert done.status_code == 303
    assert (await login(web, alice.email, new)).status_code == 303
    # The link is spent.
    assert (await web.get(link)).status_code == 404
