"""The public shop's headless checkout, walked as a buyer walks it (no credentials): the event,
its catalog and questions, a cart with a product added and one taken out, a checkout, the
order by its code and secret, its cancellation, the waiting list of a sold-out product, the
(empty) dates of a single event, a product's add-ons offered and chosen, and a file sent for a
file question."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from tests.conditional.recipes import Env
from tests.shop import helpers as shop
from tests.uploads.helpers import image_bytes

Scenario = Callable[[Env], Awaitable[None]]


async def _ok(env: Env, method: str, url: str, body: Any = None) -> Any:
    response = await env.client.request(method, url, json=body)
    assert 200 <= response.status_code < 300, (method, url, response.status_code, response.text)
    return response.json()


async def public_checkout(env: Env) -> None:
    found = await shop.setup(env.factory, env.world, size=1, waiting_list_enabled=True)
    base = shop.base(env.world)
    await _ok(env, "GET", f"{base}/")
    await _ok(env, "GET", f"{base}/catalog/")
    await _ok(env, "GET", f"{base}/questions/")
    products = [{"item": found.ticket.id}, {"item": found.free.id}]
    cart = await _ok(env, "POST", f"{base}/carts/", {"products": products})
    cart_id = cart["cart_id"]
    free = next(p["id"] for p in cart["positions"] if p["item"] == found.free.id)
    await _ok(env, "DELETE", f"{base}/carts/{cart_id}/positions/{free}/")
    await _ok(env, "GET", f"{base}/carts/{cart_id}/")
    body = {"cart_id": cart_id, "email": "buyer@example.org", "payment_provider": "banktransfer"}
    order = await _ok(env, "POST", f"{base}/checkout/", body)
    code, secret = order["url"].rstrip("/").split("/")[-2:]
    await _ok(env, "GET", f"{base}/orders/{code}/{secret}/")
    wait = {"item": found.ticket.id, "email": "wait@example.org"}
    await _ok(env, "POST", f"{base}/waitinglist/", wait)  # sold out: the one ticket is held
    await _ok(env, "POST", f"{base}/orders/{code}/{secret}/cancel/")
    # add-ons (and a single event's empty list of dates)
    await _ok(env, "GET", f"{base}/dates/")
    extras = await shop.extras(env.factory, found)
    cart = await _ok(env, "POST", f"{base}/carts/", {"products": [{"item": extras.vip.id}]})
    main = next(p["id"] for p in cart["positions"] if p["addon_to"] is None)
    await _ok(env, "GET", f"{base}/carts/{cart['cart_id']}/addons/")
    chosen = {"products": [{"item": extras.shirt.id}]}
    await _ok(env, "PUT", f"{base}/carts/{cart['cart_id']}/positions/{main}/addons/", chosen)


async def public_upload(env: Env) -> None:
    found = await shop.setup(env.factory, env.world)
    await shop.question(env.factory, found.event, found.ticket, "Photo", type="F")
    headers = {"content-type": "image/png", "content-disposition": 'attachment; filename="a.png"'}
    response = await env.client.post(
        f"{shop.base(env.world)}/upload/", content=image_bytes("PNG"), headers=headers
    )
    assert response.status_code == 201, response.text


async def public_customer(env: Env) -> None:
    """The organizer switches customer accounts on and makes one; its buyer logs in."""
    org = f"/api/v1/organizers/{env.world.org.slug}"
    switched = await env.client.patch(
        f"{org}/settings/", json={"customer_accounts": True}, headers=env.h
    )
    assert switched.status_code == 200, switched.text
    made = await env.client.post(
        f"{org}/customers/",
        json={"email": "ada@example.org", "password": "a long password"},
        headers=env.h,
    )
    assert made.status_code == 201, made.text
    public = f"/api/v1/public/organizers/{env.world.org.slug}/customer"
    login = {"email": "ada@example.org", "password": "a long password"}
    token = (await _ok(env, "POST", f"{public}/login/", login))["token"]
    answer = await env.client.get(f"{public}/", headers={"Authorization": f"Customer {token}"})
    assert answer.status_code == 200, answer.text


SCENARIOS: list[Scenario] = [public_checkout, public_upload, public_customer]
