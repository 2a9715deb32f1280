"""The headless checkout's customer login (``customer/login/``, ``customer/``) and orders
placed by a logged-in customer against their membership."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from sqlalchemy import insert, select, update

from admit.auth.credentials import hash_password
from admit.customers import sign_in
from admit.models import (
    Customer,
    Item,
    Membership,
    MembershipType,
    Order,
    OrderPosition,
    Organizer,
    item_required_membership_types,
)
from tests.factories import Factory, World
from tests.shop import helpers as h

PASSWORD = "correct horse battery"
START = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
END = dt.datetime(2099, 12, 31, tzinfo=dt.UTC)


def customer_url(world: World, org: Organizer | None = None) -> str:
    return f"/api/v1/public/organizers/{(org or world.org).slug}/customer/"


async def accounts(factory: Factory, org: Organizer, **settings: Any) -> None:
    values = {"customer_accounts": True, **settings}
    async with factory.sessionmaker() as s:
        await s.execute(update(Organizer).where(Organizer.id == org.id).values(settings=values))
        await s.commit()


async def customer(factory: Factory, org: Organizer, ident: str, **kw: Any) -> Customer:
    kw.setdefault("email", f"{ident.lower()}@example.org")
    kw.setdefault("password_hash", hash_password(PASSWORD))
    return await factory._add(  # type: ignore[return-value]
        Customer(organizer_id=org.id, identifier=ident, name_cached="Ada Lovelace", **kw)
    )


async def login(client: Any, world: World, email: str, password: str = PASSWORD) -> Any:
    return await client.post(
        f"{customer_url(world)}login/", json={"email": email, "password": password}
    )


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Customer {token}"}


async def test_no_accounts_no_login(client, world: World, factory: Factory):
    await customer(factory, world.org, "ADA1234")
    assert (await login(client, world, "ada1234@example.org")).status_code == 404
    await accounts(factory, world.org, customer_accounts_native=False)
    assert (await login(client, world, "ada1234@example.org")).status_code == 404
    r = await client.post(f"{customer_url(world)}login/".replace("acme", "nobody"), json={})
    assert r.status_code == 404


async def test_login_answers_a_token_that_reads_the_account(client, world, factory):
    await accounts(factory, world.org)
    ada = await customer(factory, world.org, "ADA1234")
    r = await login(client, world, " ADA1234@example.org ")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["customer"] == {
        "identifier": "ADA1234",
        "email": "ada1234@example.org",
        "name": "Ada Lovelace",
        "locale": "en",
    }
    assert body["expires_in"] == sign_in.TOKEN_DAYS * 86400
    r = await client.get(customer_url(world), headers=bearer(body["token"]))
    assert r.status_code == 200, r.text
    assert r.json()["identifier"] == "ADA1234" and r.json()["memberships"] == []
    async with factory.sessionmaker() as s:
        assert (await s.get(Customer, ada.id)).last_login is not None


@pytest.mark.parametrize(
    ("email", "password", "kw"),
    [
        ("ada1234@example.org", "wrong password", {}),
        ("nobody@example.org", PASSWORD, {}),
        ("ada1234@example.org", PASSWORD, {"is_active": False}),
        ("ada1234@example.org", PASSWORD, {"is_verified": False}),
        ("ada1234@example.org", PASSWORD, {"password_hash": None}),
        ("", "", {}),
    ],
)
async def test_a_refused_login_does_not_say_why(client, world, factory, email, password, kw):
    await accounts(factory, world.org)
    await customer(factory, world.org, "ADA1234", **kw)
    r = await login(client, world, email, password)
    assert r.status_code == 400
    assert "wrong" in str(r.json())
    assert "token" not in r.json()


async def test_bad_bodies_are_400(client, world, factory):
    await accounts(factory, world.org)
    url = f"{customer_url(world)}login/"
    for body in ({}, {"email": 1, "password": 2}, {"email": "a" * 300, "password": "x"}, [1]):
        r = await client.post(url, json=body)
        assert r.status_code == 400, (body, r.text)


async def test_tokens_end_with_the_password_the_organizer_and_time(
    client, world, factory, monkeypatch
):
    await accounts(factory, world.org)
    await accounts(factory, world.other)
    ada = await customer(factory, world.org, "ADA1234")
    token = (await login(client, world, "ada1234@example.org")).json()["token"]
    # another organizer's account pages do not know it
    r = await client.get(customer_url(world, world.other), headers=bearer(token))
    assert r.status_code == 401
    # no header, another scheme, garbage
    assert (await client.get(customer_url(world))).status_code == 401
    assert (
        await client.get(customer_url(world), headers={"Authorization": "Token x"})
    ).status_code == 401
    assert (await client.get(customer_url(world), headers=bearer("x.y.z"))).status_code == 401
    # expired
    monkeypatch.setattr(sign_in, "TOKEN_DAYS", -1)
    assert (await client.get(customer_url(world), headers=bearer(token))).status_code == 401
    monkeypatch.undo()
    assert (await client.get(customer_url(world), headers=bearer(token))).status_code == 200
    # a new password ends it
    async with factory.sessionmaker() as s:
        await s.execute(
            update(Customer)
            .where(Customer.id == ada.id)
            .values(password_hash=hash_password("new one!"))
        )
        await s.commit()
    assert (await client.get(customer_url(world), headers=bearer(token))).status_code == 401


async def _members_ticket(factory: Factory, world: World) -> tuple[Item, int]:
    """A product of the shop that requires a membership of the type made here."""
    shop = await h.setup(factory, world)
    async with factory.sessionmaker() as s:
        mtype = MembershipType(organizer_id=world.org.id, name={"en": "Season"}, max_usages=1)
        s.add(mtype)
        await s.flush()
        await s.execute(
            update(Item).where(Item.id == shop.ticket.id).values(require_membership=True)
        )
        await s.execute(
            insert(item_required_membership_types).values(
                item_id=shop.ticket.id, membership_type_id=mtype.id
            )
        )
        await s.commit()
        return shop.ticket, mtype.id


async def _membership(factory: Factory, world: World, customer_id: int, type_id: int) -> int:
    return (
        await factory._add(
            Membership(
                organizer_id=world.org.id,
                customer_id=customer_id,
                membership_type_id=type_id,
                date_start=START,
                date_end=END,
            )
        )
    ).id


async def test_a_logged_in_customer_buys_with_their_membership(client, world, factory):
    await accounts(factory, world.org)
    ticket, type_id = await _members_ticket(factory, world)
    ada = await customer(factory, world.org, "ADA1234")
    bob = await customer(factory, world.org, "BOB1234")
    mine = await _membership(factory, world, ada.id, type_id)
    theirs = await _membership(factory, world, bob.id, type_id)
    token = (await login(client, world, "ada1234@example.org")).json()["token"]
    listed = (await client.get(customer_url(world), headers=bearer(token))).json()["memberships"]
    assert [(m["id"], m["usages"], m["valid_now"]) for m in listed] == [(mine, 0, True)]

    cart = (await h.cart(client, world, {"item": ticket.id})).json()
    position = cart["positions"][0]["id"]

    async def buy(headers: dict[str, str], membership: int | None) -> Any:
        details: dict[str, Any] = {"id": position}
        if membership is not None:
            details["used_membership"] = membership
        body = {
            "cart_id": cart["cart_id"],
            "email": "ada1234@example.org",
            "payment_provider": "banktransfer",
            "positions": [details],
        }
        return await client.post(f"{h.base(world)}/checkout/", json=body, headers=headers)

    # a guest cannot use a membership, nor buy the product without one
    for membership in (mine, None):
        r = await buy({}, membership)
        assert r.status_code == 400, r.text
        assert "positions" in r.json()
    # logged in: not without one, not with another customer's, nor with an expired login
    assert (await buy(bearer(token), None)).status_code == 400
    r = await buy(bearer(token), theirs)
    assert r.status_code == 400 and "different customer" in r.text
    assert (await buy(bearer(token + "x"), mine)).status_code == 401
    r = await buy(bearer(token), mine)
    assert r.status_code == 201, r.text
    code = r.json()["code"]
    async with factory.sessionmaker() as s:
        order = await s.scalar(select(Order).where(Order.code == code))
        assert order.customer_id == ada.id
        used = await s.scalar(
            select(OrderPosition.used_membership_id).where(OrderPosition.order_id == order.id)
        )
    assert used == mine
    listed = (await client.get(customer_url(world), headers=bearer(token))).json()["memberships"]
    assert [(m["usages"], m["valid_now"]) for m in listed] == [(1, False)]  # max_usages 1
