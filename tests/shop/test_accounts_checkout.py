"""The customer account in the shop's checkout form (no browser): the product list says a
product requires a membership; the form offers to log in; a logged-in buyer's order is theirs,
sold against the membership chosen from those valid for the ticket; refusals (not logged in,
none chosen, one the order's own check refuses) are sentences with the input kept."""

from __future__ import annotations

import re

from sqlalchemy import select, update

from admit.models import Membership, Order, OrderPosition
from tests.oauth.helpers import csrf
from tests.shop import accounts_helpers as ah
from tests.shop import helpers as h

A = "/acme/account/"


async def _logged_in(client, email: str) -> None:
    token = csrf((await client.get(f"{A}login/")).text)
    data = {"csrf_token": token, "email": email, "password": ah.PASSWORD}
    assert (await client.post(f"{A}login/", data=data)).status_code == 303


async def _cart_with(client, front: str, item_id: int) -> str:
    token = csrf((await client.get(front)).text)
    r = await client.post(f"{front}cart/add", data={"csrf_token": token, f"qty_{item_id}": "1"})
    assert r.status_code == 303, r.text
    return token


async def test_a_member_buys_with_a_membership(client, world, factory):
    shop = await h.setup(factory, world)
    await ah.accounts_on(factory, world.org)
    item, mtype = await ah.membership_item(factory, shop.event)
    ada = await ah.customer(factory, world.org, "ada@example.org")
    other_type = await factory._add(
        type(mtype)(organizer_id=world.org.id, name={"en": "Day pass"}, max_usages=None)
    )
    season = await ah.membership(factory, ada, mtype)
    await ah.membership(factory, ada, other_type)  # not accepted for the product: not offered
    await ah.membership(factory, ada, mtype, canceled=True)  # canceled: not offered
    front = f"/{world.org.slug}/{world.event.slug}/"
    page = await client.get(front)
    assert "Requires a membership" in page.text and 'href="/acme/account/"' in page.text
    token = await _cart_with(client, front, item.id)
    form = await client.get(f"{front}checkout/")
    assert "Log in to see this order in your account" in form.text
    assert "/acme/account/login/?next=%2Facme%2Fsummit%2Fcheckout%2F" in form.text
    assert "This ticket requires a membership: please" in form.text
    r = await h.checkout_form(client, front, token)
    assert r.status_code == 400
    assert "Ticket 1 (Members&#39; ticket) requires a membership: please log in" in r.text
    assert 'value="ada@example.org"' in r.text  # input kept
    await _logged_in(client, "ada@example.org")
    form = await client.get(f"{front}checkout/")
    assert "You are logged in as" in form.text and 'value="ada@example.org"' in form.text
    offered = re.findall(r'<option value="(\d+)"', form.text)
    assert offered == [str(season.id)]
    assert "Season pass (" in form.text
    pid = re.search(r'name="membership_(\d+)"', form.text).group(1)  # type: ignore[union-attr]
    token = csrf(form.text)
    r = await h.checkout_form(client, front, token, **{f"membership_{pid}": str(season.id)})
    assert r.status_code == 303, r.text
    async with factory.sessionmaker() as session:
        order = await session.scalar(select(Order))
        position = await session.scalar(select(OrderPosition))
    assert order.customer_id == ada.id and position.used_membership_id == season.id
    account = await client.get(A)
    assert order.code in account.text and "Pending payment" in account.text
    assert f"/acme/summit/order/{order.code}/{order.secret}/" in account.text
    assert "Season pass" in account.text and "Used 1 of 3" in account.text


async def test_the_orders_own_check_refuses_with_input_kept(client, world, factory):
    shop = await h.setup(factory, world)
    await ah.accounts_on(factory, world.org)
    item, mtype = await ah.membership_item(factory, shop.event)
    ada = await ah.customer(factory, world.org, "ada@example.org")
    season = await ah.membership(factory, ada, mtype)
    front = f"/{world.org.slug}/{world.event.slug}/"
    await _cart_with(client, front, item.id)
    await _logged_in(client, "ada@example.org")
    form = await client.get(f"{front}checkout/")
    pid = re.search(r'name="membership_(\d+)"', form.text).group(1)  # type: ignore[union-attr]
    token = csrf(form.text)
    r = await h.checkout_form(client, front, token)  # none chosen
    assert r.status_code == 400 and "please choose one of yours" in r.text
    # canceled after the form was shown: the order's check refuses it
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Membership).where(Membership.id == season.id).values(canceled=True)
        )
        await session.commit()
    r = await h.checkout_form(
        client, front, token, email="ada@example.org", **{f"membership_{pid}": str(season.id)}
    )
    assert r.status_code == 400
    assert "Ticket 1 – Membership: You selected a membership that has been canceled." in r.text
    assert "none of yours is valid for it" in r.text  # the form offers nothing now
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(Order)) is None
    # another customer's membership id: refused by the same check
    bo = await ah.customer(factory, world.org, "bo@example.org")
    bos = await ah.membership(factory, bo, mtype)
    r = await h.checkout_form(client, front, token, **{f"membership_{pid}": str(bos.id)})
    assert r.status_code == 400
    assert "connected to a different customer account" in r.text


async def test_a_guest_order_without_memberships_is_unchanged(client, world, factory):
    shop = await h.setup(factory, world)
    await ah.accounts_on(factory, world.org)
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = await _cart_with(client, front, shop.ticket.id)
    r = await h.checkout_form(client, front, token)
    assert r.status_code == 303
    async with factory.sessionmaker() as session:
        assert (await session.scalar(select(Order))).customer_id is None


async def test_guest_orders_show_by_email_where_the_organizer_links_them(client, world, factory):
    shop = await h.setup(factory, world)
    await ah.accounts_on(factory, world.org, customer_accounts_link_by_email=True)
    await ah.customer(factory, world.org, "ada@example.org")
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = await _cart_with(client, front, shop.ticket.id)
    assert (await h.checkout_form(client, front, token)).status_code == 303
    await _logged_in(client, "ada@example.org")
    async with factory.sessionmaker() as session:
        order = await session.scalar(select(Order))
    assert order.customer_id is None and order.code in (await client.get(A)).text
    await ah.accounts_on(factory, world.org)  # linking off: the guest order is not shown
    assert order.code not in (await client.get(A)).text


async def test_without_accounts_a_membership_product_says_so(client, world, factory):
    shop = await h.setup(factory, world)
    item, _ = await ah.membership_item(factory, shop.event)
    front = f"/{world.org.slug}/{world.event.slug}/"
    page = await client.get(front)
    assert "Requires a membership" in page.text and "/acme/account/" not in page.text
    token = await _cart_with(client, front, item.id)
    form = await client.get(f"{front}checkout/")
    assert "Your account" not in form.text
    assert "which this shop cannot check online" in form.text
    r = await h.checkout_form(client, front, token)
    assert r.status_code == 400 and "which this shop cannot check online" in r.text
