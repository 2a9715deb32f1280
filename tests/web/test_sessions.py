"""Login sessions live in the database: logging out ends the session on every server process
and a copied cookie stops working; the settings page lists the sessions (created, last seen,
browser, address) and logs out the others."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select, update

from admit.app import create_app
from admit.config import Settings
from admit.models import LoginSession
from tests.conftest import _no_server_errors
from tests.oauth.helpers import BASE, PASSWORD, csrf, login

FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
PHONE = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0 Mobile Safari/537.36"
)


def browser(app, address: str = "198.51.100.7", agent: str = FIREFOX) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(address, 50000))
    return httpx.AsyncClient(
        transport=transport,
        base_url=BASE,
        headers={"User-Agent": agent},
        event_hooks={"response": [_no_server_errors]},
    )


@pytest.fixture
async def second_app(clean_app, database_url: str, tmp_path: Path) -> AsyncIterator[object]:
    """Another server process on the same database and secret key (a second node)."""
    settings = Settings(
        data_dir=tmp_path,
        database_url=database_url,
        base_url=BASE,
        secret_key=clean_app.state.secret_key,
    )
    application = create_app(settings)
    yield application
    await application.state.db.dispose()


async def log_out(client: httpx.AsyncClient) -> None:
    page = await client.get("/logout")
    response = await client.post("/logout", data={"csrf_token": csrf(page.text)})
    assert response.status_code == 303


async def test_a_copied_cookie_dies_with_the_logout_on_every_node(
    clean_app, second_app, factory, alice
):
    async with (
        browser(clean_app) as web,
        browser(clean_app) as thief,
        browser(second_app) as elsewhere,
    ):
        assert (await login(web, alice.email)).status_code == 303
        cookie = web.cookies["admit_session"]
        thief.cookies.set("admit_session", cookie)
        elsewhere.cookies.set("admit_session", cookie)
        assert (await thief.get("/settings/")).status_code == 200  # the copy works ...
        assert (await elsewhere.get("/settings/")).status_code == 200  # ... on either node
        await log_out(web)
        for client in (thief, elsewhere):
            response = await client.get("/settings/")
            assert response.status_code == 303, response.text  # ... until the logout
            assert response.headers["location"].startswith("/login")
        # The API refuses it too (pages are the only users of the cookie).
        async with factory.sessionmaker() as session:
            assert (await session.execute(select(LoginSession))).first() is None

        # Logging out on the other node ends the session here as well.
        assert (await login(web, alice.email)).status_code == 303
        elsewhere.cookies.clear()
        elsewhere.cookies.set("admit_session", web.cookies["admit_session"])
        assert (await elsewhere.get("/settings/")).status_code == 200
        await log_out(elsewhere)
        assert (await web.get("/settings/")).status_code == 303


async def test_the_settings_page_lists_sessions_and_logs_out_the_others(clean_app, factory, alice):
    async with (
        browser(clean_app, "198.51.100.7", FIREFOX) as laptop,
        browser(clean_app, "203.0.113.44", PHONE) as phone,
    ):
        assert (await login(phone, alice.email)).status_code == 303
        assert (await login(laptop, alice.email)).status_code == 303
        # The phone was last seen a while ago: the next page view notes it again.
        async with factory.sessionmaker() as session:
            await session.execute(
                update(LoginSession)
                .where(LoginSession.user_agent == PHONE)
                .values(last_seen=dt.datetime.now(dt.UTC) - dt.timedelta(hours=2))
            )
            await session.commit()
        page = await laptop.get("/settings/")
        assert page.status_code == 200
        text = page.text
        assert "Firefox on Linux" in text and "Chrome on Android" in text
        assert "198.51.100.7" in text and "203.0.113.44" in text
        assert (
            text.index("Firefox on Linux")
            < text.index("This browser")
            < text.index("Chrome on Android")
        )
        assert "Log out all other sessions" in text
        assert (await phone.get("/settings/")).status_code == 200
        async with factory.sessionmaker() as session:
            seen = (
                await session.execute(
                    select(LoginSession.last_seen).where(LoginSession.user_agent == PHONE)
                )
            ).scalar_one()
        assert dt.datetime.now(dt.UTC) - seen.replace(tzinfo=dt.UTC) < dt.timedelta(minutes=1)

        done = await laptop.post(
            "/settings/sessions/logout-others", data={"csrf_token": csrf(page.text)}
        )
        assert done.status_code == 303
        page = await laptop.get("/settings/")
        assert "1 other session was logged out." in page.text
        assert "You are not logged in anywhere else." in page.text
        assert (await phone.get("/settings/")).status_code == 303
        # Without the CSRF token nothing happens.
        assert (await login(phone, alice.email)).status_code == 303
        refused = await laptop.post("/settings/sessions/logout-others", data={})
        assert refused.status_code == 403
        assert (await phone.get("/settings/")).status_code == 200


async def test_a_password_change_ends_the_other_sessions_rows(clean_app, factory, alice):
    async with browser(clean_app) as web, browser(clean_app, "203.0.113.5", PHONE) as other:
        await login(web, alice.email)
        await login(other, alice.email)
        page = await web.get("/settings/password/")
        new = "a much better password"
        data = {"csrf_token": csrf(page.text), "current": PASSWORD}
        done = await web.post(
            "/settings/password/", data={**data, "password": new, "password2": new}
        )
        assert done.status_code == 303
        async with factory.sessionmaker() as session:
            rows = (await session.execute(select(LoginSession.user_agent))).scalars().all()
        assert rows == [FIREFOX]
        assert (await web.get("/settings/")).status_code == 200
        assert (await other.get("/settings/")).status_code == 303
