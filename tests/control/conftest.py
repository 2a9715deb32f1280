"""A small event sold through the API, and people with different permissions on it, for the
back-office tests (the page clients come from :mod:`tests.oauth.fixtures`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from admit.auth.credentials import hash_password
from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
from tests.factories import Factory
from tests.oauth.fixtures import api, app, web  # noqa: F401
from tests.oauth.helpers import PASSWORD

# Hashed once: argon2 takes a second or more on a busy machine, per user and per login.
PASSWORD_HASH = hash_password(PASSWORD)


async def sign_in(client, factory: Factory, email: str) -> None:
    """A fresh browser logged in as ``email``, its session made as the login page makes it
    (a login session row, the signed cookie) without paying for the password check."""
    from itsdangerous import URLSafeTimedSerializer
    from sqlalchemy import select

    from admit.models import User
    from admit.users import logins
    from admit.web.sessions import _SALT, COOKIE, WebSession

    async with factory.sessionmaker() as session:
        user = (await session.scalars(select(User).where(User.email == email))).one()
        _, key = await logins.start(session, user.id, user_agent="test", ip="198.51.100.7", hours=1)
        await session.commit()
    state = WebSession()
    state.log_in(user, key)
    secret_key = client._transport.app.state.secret_key
    cookie = URLSafeTimedSerializer(secret_key, salt=_SALT).dumps(state.data)
    client.cookies.clear()
    client.cookies.set(COOKIE, cookie, domain="127.0.0.1")


E = "/api/v1/organizers/acme/events/summit"


@dataclass
class Shop:
    item: int
    quota: int
    checkin_list: int
    orders: list[dict] = field(default_factory=list)
    token: str = ""
    made: dict[str, str] = field(default_factory=dict)  # ids a page's URL needs (id, cid)

    @property
    def base(self) -> str:
        return "/control/event/acme/summit/"


async def _post(client, token: str, path: str, body: dict) -> dict:
    response = await client.post(path, json=body, headers={"Authorization": f"Token {token}"})
    assert response.status_code == 201, response.text
    return response.json()


@pytest.fixture
async def shop(factory: Factory, api) -> Shop:  # noqa: F811
    org = await factory.organizer("acme", name="Acme Events")
    await factory.event(org, "summit", name={"en": "Summit 2030"}, currency="EUR")
    other = await factory.organizer("rival", name="Rival")
    await factory.event(other, "expo")
    token = await factory.admin_token(org)
    item = await _post(
        api, token, f"{E}/items/", {"name": {"en": "Ticket"}, "default_price": "20.00"}
    )
    quota = await _post(
        api, token, f"{E}/quotas/", {"name": "Hall", "size": 100, "items": [item["id"]]}
    )
    clist = await _post(
        api, token, f"{E}/checkinlists/", {"name": "Entrance", "all_products": True}
    )
    shop = Shop(item["id"], quota["id"], clist["id"], token=token)
    people = [("ada@example.org", "Ada Lovelace", "p"), ("bob@example.org", "Bob Builder", "n"),
              ("cy@example.org", "Cy Twombly", "n")]  # fmt: skip
    for email, name, status in people:
        body = {"email": email, "status": status, "payment_provider": "banktransfer",
                "positions": [{"item": item["id"], "attendee_name": name}]}  # fmt: skip
        shop.orders.append(await _post(api, token, f"{E}/orders/", body))
    return shop


@pytest.fixture
async def people(factory: Factory, shop: Shop) -> dict[str, str]:
    """E-mail of: ``boss`` (every permission), ``reader`` (reads orders only), ``scanner``
    (check-in only), ``nobody`` (a team without permissions), ``outsider`` (another
    organizer's boss)."""
    from sqlalchemy import select

    from admit.models import Organizer

    async with factory.sessionmaker() as session:
        org = (await session.scalars(select(Organizer).where(Organizer.slug == "acme"))).one()
        rival = (await session.scalars(select(Organizer).where(Organizer.slug == "rival"))).one()
    grants = {
        "boss": (org, list(EVENT_PERMISSIONS), list(ORGANIZER_PERMISSIONS)),
        "reader": (org, ["event.orders:read"], []),
        "scanner": (org, ["event.orders:checkin"], []),
        "nobody": (org, [], []),
        "outsider": (rival, list(EVENT_PERMISSIONS), list(ORGANIZER_PERMISSIONS)),
    }
    emails = {}
    for name, (organizer, ev, op) in grants.items():
        user = await factory.user(
            f"{name}@example.org", password_hash=PASSWORD_HASH, fullname=name.title()
        )
        await factory.team(
            organizer, members=[user], event_permissions=ev, organizer_permissions=op
        )
        emails[name] = user.email
    return emails


async def made_then_edited(
    client, api_client, people: dict[str, str], factory: Factory, shop: Shop, *edit: Any
) -> tuple[dict, str]:
    """An object made through the API (``body`` to ``E/{path}/``), then saved by the user Boss
    on its back-office page (``{area}/{id}/``, ``form``): the object and the page's History.
    ``edit`` is ``area, path, body, form``."""
    from tests.oauth.helpers import csrf

    area, path, body, form = edit
    made = await _post(api_client, shop.token, f"{E}/{path}/", body)
    await sign_in(client, factory, people["boss"])
    url = f"{shop.base}{area}/{made['id']}/"
    token = csrf((await client.get(url)).text)
    saved = await client.post(url, data={"csrf_token": token, **form})
    assert saved.status_code == 303, saved.text[saved.text.find("<main") :][:1500]
    page = (await client.get(url)).text
    return made, history_of(page)


def history_of(page: str) -> str:
    """A page's History section (to the page's end)."""
    return page[page.index("<h2>History</h2>") :]
