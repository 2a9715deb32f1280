"""Going live: an event sells nothing without a quota, and paid products need a payment
method (a payment plugin enabled for the event). Creating an event live is refused outright."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from admit.models import Event, Item, ItemVariation
from tests.factories import Factory, World, auth

EVENTS = "/api/v1/organizers/acme/events/"
SUMMIT = f"{EVENTS}summit/"
NO_QUOTA = "You need to configure at least one quota to sell anything."
NO_PAYMENT = (
    "You have configured at least one paid product but have not enabled any payment methods."
)
CREATED_LIVE = (
    "Events cannot be created as 'live'. Quotas and payment must be added to the event before "
    "sales can go live."
)


async def _item(factory: Factory, event: Event, price: str, **kw: Any) -> Item:
    item = Item(event_id=event.id, name={"en": "Ticket"}, default_price=Decimal(price), **kw)
    return await factory._add(item)  # type: ignore[return-value]


async def _live(client, world: World, body: dict | None = None, method: str = "PATCH"):
    body = {"live": True, **(body or {})}
    return await client.request(method, SUMMIT, json=body, headers=auth(world.admin))


async def _is_live(client, world: World) -> bool:
    return (await client.get(SUMMIT, headers=auth(world.admin))).json()["live"]


async def test_without_a_quota_is_refused(client, world: World):
    response = await _live(client, world)
    assert response.status_code == 400, response.text
    assert response.json() == {"live": [NO_QUOTA]}
    assert await _is_live(client, world) is False


async def test_paid_product_without_payment_and_without_quota_names_both(
    client, world: World, factory
):
    await _item(factory, world.event, "10.00")
    response = await _live(client, world)
    assert response.json() == {"live": [NO_PAYMENT, NO_QUOTA]}


async def test_paid_product_without_payment_is_refused(client, world: World, factory):
    item = await _item(factory, world.event, "10.00")
    await factory.quota(world.event, items=[item])
    response = await _live(client, world, {"plugins": ["sendmail"]})
    assert response.status_code == 400
    assert response.json() == {"live": [NO_PAYMENT]}
    assert await _is_live(client, world) is False


async def test_a_paid_variation_counts_as_paid(client, world: World, factory):
    item = await _item(factory, world.event, "0.00")
    await factory._add(ItemVariation(item_id=item.id, value={"en": "VIP"}, default_price=5))
    await factory.quota(world.event, items=[item])
    response = await _live(client, world, {"plugins": []})
    assert response.json() == {"live": [NO_PAYMENT]}


METHOD_SETTING = {
    "banktransfer": "payment_banktransfer__enabled",
    "manualpayment": "payment_manual__enabled",
    "pretix.plugins.banktransfer": "payment_banktransfer__enabled",
}


async def _enable_method(client, world: World, plugin: str) -> None:
    response = await client.patch(
        f"{SUMMIT}settings/", json={METHOD_SETTING[plugin]: True}, headers=auth(world.admin)
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("plugin", ["banktransfer", "manualpayment", "pretix.plugins.banktransfer"])
async def test_a_payment_plugin_enabled_in_the_same_request_counts(
    client, world: World, factory, plugin
):
    item = await _item(factory, world.event, "10.00")
    await factory.quota(world.event, items=[item])
    await _enable_method(client, world, plugin)
    response = await _live(client, world, {"plugins": [plugin]})
    assert response.status_code == 200, response.text
    assert response.json()["live"] is True


@pytest.mark.parametrize("plugin", ["banktransfer", "manualpayment"])
async def test_a_payment_plugin_whose_method_is_off_is_no_payment_method(
    client, world: World, factory, plugin
):
    """The reference: the plugin alone does not switch its payment method on; going live
    with a paid product is 400 until ``payment_<method>__enabled`` is set (issue 28)."""
    item = await _item(factory, world.event, "10.00")
    await factory.quota(world.event, items=[item])
    response = await _live(client, world, {"plugins": [plugin]})
    assert response.status_code == 400, response.text
    assert response.json() == {"live": [NO_PAYMENT]}
    assert await _is_live(client, world) is False
    # A method switched on without its plugin does not count either.
    await _enable_method(client, world, plugin)
    response = await _live(client, world, {"plugins": ["sendmail"]})
    assert response.json() == {"live": [NO_PAYMENT]}
    response = await _live(client, world, {"plugins": [plugin]})
    assert response.status_code == 200, response.text


async def test_free_products_need_no_payment_method(client, world: World, factory):
    item = await _item(factory, world.event, "0.00")
    await factory.quota(world.event, items=[item])
    response = await _live(client, world, {"plugins": []})
    assert response.status_code == 200, response.text
    assert await _is_live(client, world) is True


async def test_put_follows_the_same_rule(client, world: World, factory):
    body = {"name": {"en": "Summit"}, "slug": "summit", "date_from": "2030-05-01T10:00:00Z"}
    response = await _live(client, world, body, method="PUT")
    assert response.json() == {"live": [NO_QUOTA]}
    await factory.quota(world.event)
    response = await _live(client, world, body, method="PUT")
    assert response.status_code == 200, response.text


async def test_a_live_event_stays_editable_and_can_go_offline(client, world: World, factory):
    quota = await factory.quota(world.event)
    assert (await _live(client, world)).status_code == 200
    await _item(factory, world.event, "10.00")  # added after going live
    async with factory.sessionmaker() as session:
        await session.delete(await session.get(type(quota), quota.id))
        await session.commit()
    # The rule is about going live, not about every later change of a live event.
    response = await client.patch(SUMMIT, json={"location": "Hall"}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    response = await client.patch(SUMMIT, json={"live": False}, headers=auth(world.admin))
    assert response.status_code == 200
    assert (await _live(client, world)).json() == {"live": [NO_PAYMENT, NO_QUOTA]}


async def test_creating_live_is_refused_even_when_cloning(client, world: World, factory):
    await factory.quota(world.event)
    body = {"name": "Copy", "slug": "copy", "date_from": "2031-01-01T10:00:00Z", "live": True}
    for url in (EVENTS, f"{EVENTS}?clone_from=summit", f"{SUMMIT}clone/"):
        response = await client.post(url, json=body, headers=auth(world.admin))
        assert response.status_code == 400, (url, response.text)
        assert response.json() == {"live": [CREATED_LIVE]}
