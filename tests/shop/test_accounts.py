"""The customer account's pages over HTTP (no browser): 404 while the organizer's accounts are
off; sign-up with its mail and the password link (expiring, single use); login with its
refusals and throttle; inactive accounts and other organizers' customers; forgotten password
answering the same for unknown addresses; changing name and password; German."""

from __future__ import annotations

import asyncio
import time

import itsdangerous.timed
import pytest
from sqlalchemy import select

from admit.customers import password_links, self_service
from admit.models import Customer
from tests.conftest import asgi_client
from tests.lock_waits import PG_ONLY, lock_waits
from tests.oauth.helpers import csrf
from tests.shop import accounts_helpers as ah
from tests.shop import helpers as h

A = "/acme/account/"


async def _form(client, url: str) -> str:
    page = await client.get(url)
    assert page.status_code == 200, page.text
    return csrf(page.text)


async def _login(client, email: str, password: str = ah.PASSWORD, **extra: str):
    token = await _form(client, f"{A}login/")
    data = {"csrf_token": token, "email": email, "password": password, **extra}
    return await client.post(f"{A}login/", data=data)


async def test_pages_are_404_while_accounts_are_off(client, world, factory):
    await h.setup(factory, world)
    for path in ("", "login/", "signup/", "forgot/", "password/abc/"):
        assert (await client.get(f"{A}{path}")).status_code == 404, path
    await ah.customer(factory, world.org, "ada@example.org")
    token = csrf((await client.get(f"/{world.org.slug}/{world.event.slug}/")).text)
    data = {"csrf_token": token, "email": "ada@example.org", "password": ah.PASSWORD}
    assert (await client.post(f"{A}login/", data=data)).status_code == 404
    # on, but without Admit's own login (customer_accounts_native off): 404 as well
    await ah.accounts_on(factory, world.org, customer_accounts_native=False)
    assert (await client.get(f"{A}login/")).status_code == 404
    await ah.accounts_on(factory, world.org)
    assert (await client.get(f"{A}login/")).status_code == 200
    assert (await client.get("/rival/account/login/")).status_code == 404  # the other's is off


async def test_an_event_called_account_keeps_its_shop_while_accounts_are_off(
    client, world, factory
):
    await factory.event(world.org, "account", live=True, name={"en": "The Account Gala"})
    page = await client.get(A)
    assert page.status_code == 200 and "The Account Gala" in page.text
    await ah.accounts_on(factory, world.org)
    assert (await client.get(A)).headers["location"].startswith(f"{A}login/")


async def test_sign_up_set_password_and_log_in(client, world, factory):
    await ah.accounts_on(factory, world.org)
    token = await _form(client, f"{A}signup/")
    r = await client.post(
        f"{A}signup/", data={"csrf_token": token, "name": " ", "email": "not an address"}
    )
    assert r.status_code == 400
    assert "Please enter your name." in r.text and "Enter a valid email address." in r.text
    assert 'value="not an address"' in r.text  # input kept
    assert (await client.post(f"{A}signup/", data={"name": "x"})).status_code == 403  # no CSRF
    r = await client.post(
        f"{A}signup/",
        data={"csrf_token": token, "name": "Ada  Lovelace", "email": "Ada@Example.org"},
    )
    assert r.status_code == 200 and "Check your mailbox" in r.text
    async with factory.sessionmaker() as session:
        made = await session.scalar(select(Customer))
    assert made.email == "Ada@example.org" and made.name_cached == "Ada Lovelace"
    assert not made.is_verified and made.password_hash is None
    [mail] = await ah.mails(factory)
    assert mail.to == ["Ada@example.org"] and "Set the password" in mail.subject
    assert "Hello Ada Lovelace" in mail.body and mail.html and "Set my password" in mail.html
    link = ah.link_in(mail.body)
    assert link in mail.html
    # no login before the password is set
    assert (await _login(client, "ada@example.org", "")).status_code == 400
    path = link.split("://", 1)[1].split("/", 1)[1]
    form = await client.get(f"/{path}")
    assert form.status_code == 200 and "Choose your password" in form.text
    token = csrf(form.text)
    r = await client.post(
        f"/{path}", data={"csrf_token": token, "password": "short", "password_repeat": "other"}
    )
    assert r.status_code == 400
    assert "The password must have at least 8 characters." in r.text
    assert "The two passwords do not match." in r.text
    r = await client.post(
        f"/{path}",
        data={"csrf_token": token, "password": ah.PASSWORD, "password_repeat": ah.PASSWORD},
    )
    assert r.status_code == 303 and r.headers["location"] == A
    page = await client.get(A)
    assert page.status_code == 200 and "Your password has been set" in page.text
    assert "Ada Lovelace" in page.text and "You have no orders here yet." in page.text
    async with factory.sessionmaker() as session:
        made = await session.scalar(select(Customer))
    assert made.is_verified and made.last_login is not None
    # the link worked once
    spent = await client.get(f"/{path}")
    assert spent.status_code == 404 and "This link is not valid (any more)" in spent.text
    # log out, then in again (wrong password first; the address's case does not matter)
    token = csrf(page.text)
    r = await client.post(f"{A}logout/", data={"csrf_token": token})
    assert r.status_code == 303 and r.headers["location"] == f"{A}login/"
    assert (await client.get(A)).headers["location"].startswith(f"{A}login/?next=")
    r = await _login(client, "ada@example.org", "wrong password")
    assert r.status_code == 400 and "Wrong e-mail address or password." in r.text
    assert 'value="ada@example.org"' in r.text
    r = await _login(client, "ADA@example.org", next="/acme/summit/checkout/")
    assert r.status_code == 303 and r.headers["location"] == "/acme/summit/checkout/"
    r = await client.get(f"{A}login/?next=//evil.example/")
    assert r.headers["location"] == A  # no open redirect (already logged in: straight on)


async def test_password_links_expire_and_are_single_use(world, factory, monkeypatch):
    secret = "k" * 32
    ada = await ah.customer(factory, world.org, "ada@example.org", password=None)
    setup = password_links.make_token(secret, ada, "setup")
    reset = password_links.make_token(secret, ada, "reset")
    async with factory.sessionmaker() as session:
        assert await password_links.customer_for_token(session, secret, world.org.id, setup)
        assert await password_links.customer_for_token(session, secret, world.org.id, reset)
        # another organizer's URL, a forged or garbled token: nothing
        assert not await password_links.customer_for_token(session, secret, world.other.id, setup)
        assert not await password_links.customer_for_token(session, "x" * 32, world.org.id, setup)
        assert not await password_links.customer_for_token(session, secret, world.org.id, "a.b.c")
    real = time.time
    monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: real() + 3 * 3600)
    async with factory.sessionmaker() as session:  # 3 hours on: the reset link has expired
        assert await password_links.customer_for_token(session, secret, world.org.id, setup)
        assert not await password_links.customer_for_token(session, secret, world.org.id, reset)
    monkeypatch.setattr(itsdangerous.timed.time, "time", lambda: real() + 25 * 3600)
    async with factory.sessionmaker() as session:  # a day on: the sign-up link too
        assert not await password_links.customer_for_token(session, secret, world.org.id, setup)
    monkeypatch.setattr(itsdangerous.timed.time, "time", real)
    async with factory.sessionmaker() as session:
        found = await password_links.customer_for_token(session, secret, world.org.id, setup)
        password_links.set_password(found, ah.PASSWORD)
        await session.commit()
    async with factory.sessionmaker() as session:  # the password set: both links spent
        assert not await password_links.customer_for_token(session, secret, world.org.id, setup)
        assert not await password_links.customer_for_token(session, secret, world.org.id, reset)
        found = await session.get(Customer, ada.id)
        fresh = password_links.make_token(secret, found, "reset")
        found.is_active = False
        await session.commit()
    async with factory.sessionmaker() as session:  # a deactivated account: no link works
        assert not await password_links.customer_for_token(session, secret, world.org.id, fresh)


async def test_inactive_and_other_organizers_customers_cannot_log_in(client, world, factory):
    await ah.accounts_on(factory, world.org)
    await ah.accounts_on(factory, world.other)
    await ah.customer(factory, world.org, "off@example.org", is_active=False)
    await ah.customer(factory, world.org, "unverified@example.org", is_verified=False)
    await ah.customer(factory, world.other, "rival@example.org")
    for email in ("off@example.org", "unverified@example.org", "rival@example.org"):
        r = await _login(client, email)
        assert r.status_code == 400 and "Wrong e-mail address or password." in r.text, email
    # the rival's customer logs in at the rival's, and is no one at acme's
    token = csrf((await client.get("/rival/account/login/")).text)
    data = {"csrf_token": token, "email": "rival@example.org", "password": ah.PASSWORD}
    assert (await client.post("/rival/account/login/", data=data)).status_code == 303
    assert (await client.get("/rival/account/")).status_code == 200
    assert (await client.get(A)).status_code == 303  # to acme's login


async def test_login_is_throttled(client, world, factory):
    await ah.accounts_on(factory, world.org)
    await ah.customer(factory, world.org, "ada@example.org")
    for _ in range(5):  # ADMIT_LOGIN_MAX_FAILURES
        assert (await _login(client, "ada@example.org", "guess")).status_code == 400
    r = await _login(client, "ada@example.org")  # the right password, but too late
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0
    assert "Too many attempts. Please try again in 15 minute(s)." in r.text
    # another account from the same address is not locked out by these
    await ah.customer(factory, world.org, "bo@example.org")
    assert (await _login(client, "bo@example.org")).status_code == 303


async def test_forgot_password_answers_the_same_for_unknown_addresses(client, world, factory):
    await ah.accounts_on(factory, world.org)
    await ah.customer(factory, world.org, "ada@example.org", locale="de")
    await ah.customer(factory, world.org, "off@example.org", is_active=False)
    answers = []
    for email in ("nobody@example.org", "off@example.org", "ada@example.org"):
        token = await _form(client, f"{A}forgot/")
        r = await client.post(f"{A}forgot/", data={"csrf_token": token, "email": email})
        assert r.status_code == 200
        answers.append(r.text)
    assert answers[0] == answers[1] == answers[2]
    assert "If an account with this address exists" in answers[0]
    [mail] = await ah.mails(factory)  # only the active account got one, in its language
    assert mail.to == ["ada@example.org"] and mail.subject.startswith("Neues Passwort")
    path = "/" + ah.link_in(mail.body).split("://", 1)[1].split("/", 1)[1]
    token = csrf((await client.get(path)).text)
    new = "a new password 2"
    r = await client.post(path, data={"csrf_token": token, "password": new, "password_repeat": new})
    assert r.status_code == 303
    assert await client.post(f"{A}logout/", data={"csrf_token": csrf((await client.get(A)).text)})
    assert (await _login(client, "ada@example.org")).status_code == 400  # the old one is gone
    assert (await _login(client, "ada@example.org", new)).status_code == 303


async def test_sign_up_with_a_known_address_mails_a_reset_link(client, world, factory):
    await ah.accounts_on(factory, world.org)
    await ah.customer(factory, world.org, "ada@example.org")
    token = await _form(client, f"{A}signup/")
    data = {"csrf_token": token, "name": "Someone", "email": "ada@example.org"}
    r = await client.post(f"{A}signup/", data=data)
    assert r.status_code == 200 and "Check your mailbox" in r.text  # as for a new address
    async with factory.sessionmaker() as session:
        assert len(list(await session.scalars(select(Customer)))) == 1
        assert (await session.scalar(select(Customer))).name_cached == "Ada Lovelace"
    [mail] = await ah.mails(factory)
    assert "A new password" in mail.subject and "already has an account" in mail.body


async def test_change_name_and_password(client, clean_app, world, factory):
    await ah.accounts_on(factory, world.org)
    await ah.customer(factory, world.org, "ada@example.org")
    assert (await _login(client, "ada@example.org")).status_code == 303
    page = await client.get(A)
    token = csrf(page.text)
    r = await client.post(f"{A}name/", data={"csrf_token": token, "name": "  "})
    assert r.status_code == 400 and "Please enter your name." in r.text
    r = await client.post(f"{A}name/", data={"csrf_token": token, "name": "Ada King"})
    assert r.status_code == 303
    assert "Ada King" in (await client.get(A)).text
    new = "another password"
    wrong = {"current_password": "nope", "new_password": new, "new_password_repeat": new}
    r = await client.post(f"{A}change-password/", data={"csrf_token": token, **wrong})
    assert r.status_code == 400 and "Your current password is not correct." in r.text
    # a second browser logged in before the change is logged out by it
    async with asgi_client(clean_app) as other:
        assert (await _login(other, "ada@example.org")).status_code == 303
        assert (await other.get(A)).status_code == 200
        right = {**wrong, "current_password": ah.PASSWORD}
        r = await client.post(f"{A}change-password/", data={"csrf_token": token, **right})
        assert r.status_code == 303
        assert (await other.get(A)).status_code == 303  # its login has ended
    assert (await client.get(A)).status_code == 200  # this browser's goes on


async def test_pages_in_german(client, world, factory):
    await ah.accounts_on(factory, world.org)
    page = await client.get(f"{A}signup/?lang=de")
    assert page.status_code == 200 and "Konto erstellen" in page.text and 'lang="de"' in page.text
    token = csrf(page.text)
    r = await client.post(f"{A}signup/", data={"csrf_token": token, "name": "", "email": "x"})
    assert "Bitte geben Sie Ihren Namen ein." in r.text
    r = await client.post(
        f"{A}signup/", data={"csrf_token": token, "name": "Ada", "email": "ada@example.org"}
    )
    assert "Sehen Sie in Ihr Postfach" in r.text
    [mail] = await ah.mails(factory)
    assert mail.subject.startswith("Passwort für Ihr Konto") and "Hallo Ada" in mail.body
    assert 'lang="de"' in mail.html


async def test_a_customer_who_speaks_german_sees_german_after_logging_in(client, world, factory):
    await ah.accounts_on(factory, world.org)
    await ah.customer(factory, world.org, "ada@example.org", locale="de")
    assert (await _login(client, "ada@example.org")).status_code == 303
    page = await client.get(A)
    assert "Ihre Bestellungen" in page.text and 'lang="de"' in page.text
    assert "Your orders" in (await client.get(f"{A}?lang=en")).text  # the browser's choice


POSTS = ("signup/", "login/", "logout/", "forgot/", "password/x.y.z/", "name/", "change-password/")


async def test_account_forms_refuse_garbage_with_a_4xx(client, world, factory):
    """Bodies of the wrong shape, long and odd values, forged links: a 4xx or the form again,
    never a 5xx (the client fails the test on one)."""
    await ah.accounts_on(factory, world.org)
    await ah.customer(factory, world.org, "ada@example.org")
    assert (await _login(client, "ada@example.org")).status_code == 303
    token = csrf((await client.get(A)).text)
    odd = {
        "name": "x" * 100_000,
        "email": "\x00@\u00ff.example" * 50,
        "password": "p" * 5000,
        "current_password": "\x00",
        "new_password": "y" * 2000,
        "new_password_repeat": "y" * 2000,
        "next": "javascript:alert(1)",
    }
    for path in POSTS:
        url = f"{A}{path}"
        assert (await client.post(url, json={"a": 1})).status_code in (400, 403, 415)
        assert (await client.post(url, content=b"\xff\xfe=%%", headers=FORM)).status_code < 500
        r = await client.post(url, data={"csrf_token": token, **odd})
        assert r.status_code < 500
        if (await client.get(A)).status_code != 200:
            await _login(client, "ada@example.org")  # logged in again for the next form
        token = csrf((await client.get(A)).text)
    assert (await client.get(f"{A}password/{'a' * 5000}/")).status_code == 404


FORM = {"content-type": "application/x-www-form-urlencoded"}


async def test_concurrent_sign_ups_with_one_address_make_one_account(
    clean_app, world, factory, database_url: str
):
    """Ten sign-ups with the same address at once (PostgreSQL): the organizer's row lock
    orders them, so the first makes the account and the others find it."""
    if not database_url.startswith("postgresql"):
        pytest.skip(PG_ONLY)
    sessionmaker = clean_app.state.db.sessionmaker

    async def sign_up(index: int) -> bool:
        async with sessionmaker() as session:
            _, created = await self_service.sign_up(
                session, world.org.id, f"Ada {index}", "ada@example.org", "en"
            )
            await asyncio.sleep(0.02)  # hold the lock: the others queue behind it
            await session.commit()
            return created

    async with lock_waits(factory) as waiting_seen:
        made = await asyncio.gather(*(sign_up(i) for i in range(10)))
    assert sorted(made) == [False] * 9 + [True]
    assert max(waiting_seen) >= 1  # the race happened: sign-ups waited for the lock
    async with factory.sessionmaker() as session:
        assert len(list(await session.scalars(select(Customer)))) == 1
