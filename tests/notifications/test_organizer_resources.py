"""Gift cards, customers and waiting list entries record their types."""

from __future__ import annotations

from tests.factories import World, auth
from tests.giftcards.helpers import cards_url
from tests.notifications.helpers import Outbox, ok
from tests.orders import helpers as orders
from tests.vouchers import helpers as vh

CUSTOMERS = "/api/v1/organizers/acme/customers/"


async def test_giftcard_life_cycle(client, world: World, factory):
    out = Outbox(factory)
    org = world.org.id
    body = {"currency": "EUR", "value": "20.00"}
    card = await ok(
        await client.post(cards_url(world.org), json=body, headers=auth(world.admin)), 201
    )
    payload = {"giftcard": card["id"]}
    # Gift cards belong to the organizer, not to an event.
    await out.expect(("service.giftcards.created", None, payload), organizer_id=org)
    url = cards_url(world.org, f"{card['id']}/")
    await ok(await client.patch(url, json={"value": "25.00"}, headers=auth(world.admin)))
    await out.expect(("service.giftcards.modified", None, payload), organizer_id=org)
    await ok(await client.post(f"{url}transact/", json={"value": "-5"}, headers=auth(world.admin)))
    await out.expect(("service.giftcards.transaction.manual", None, payload), organizer_id=org)

    # Issued for a paid order of a gift card product: created as well.
    product = await orders.item(factory, world.event, "30.00", issue_giftcard=True, admission=False)
    body = {**orders.body(product.id), "status": "p", "payment_provider": "manual"}
    await ok(await client.post(orders.url(world), json=body, headers=auth(world.admin)), 201)
    rows = await out.new()
    issued = [r for r in rows if r.action == "service.giftcards.created"]
    assert len(issued) == 1 and issued[0].event_id is None and issued[0].organizer_id == org
    assert set(issued[0].payload) == {"giftcard"} and issued[0].payload["giftcard"] != card["id"]


async def test_customer_life_cycle(client, world: World, factory):
    out = Outbox(factory)
    org = world.org.id
    body = {"email": "ada@example.org", "name_parts": {"_legacy": "Ada"}}
    customer = await ok(await client.post(CUSTOMERS, json=body, headers=auth(world.admin)), 201)
    payload = {"customer": customer["identifier"]}
    await out.expect(("service.customer.created", None, payload), organizer_id=org)
    url = f"{CUSTOMERS}{customer['identifier']}/"
    await ok(await client.patch(url, json={"notes": "Regular"}, headers=auth(world.admin)))
    await out.expect(("service.customer.changed", None, payload), organizer_id=org)
    await ok(await client.post(f"{url}anonymize/", headers=auth(world.admin)))
    await out.expect(("service.customer.anonymized", None, payload), organizer_id=org)


async def test_waitinglist_life_cycle(client, world: World, factory):
    ticket = await vh.item(factory, world.event)
    quota = await vh.quota(factory, world.event, 0, [ticket])
    out = Outbox(factory)
    await out.skip()
    ev, org = world.event.id, world.org.id
    body = {"email": "wait@example.org", "item": ticket.id}
    entry = await ok(await client.post(vh.ENTRIES, json=body, headers=auth(world.admin)), 201)
    payload = {"waitinglistentry": entry["id"]}
    await out.expect(("service.event.orders.waitinglist.added", ev, payload), organizer_id=org)
    url = f"{vh.ENTRIES}{entry['id']}/"
    await ok(await client.patch(url, json={"name": "Ada"}, headers=auth(world.admin)))
    await out.expect(("service.event.orders.waitinglist.changed", ev, payload), organizer_id=org)
    await ok(await client.delete(url, headers=auth(world.admin)), 204)
    await out.expect(("service.event.orders.waitinglist.deleted", ev, payload), organizer_id=org)

    entry = await ok(await client.post(vh.ENTRIES, json=body, headers=auth(world.admin)), 201)
    await out.skip()
    await ok(
        await client.patch(f"{vh.QUOTAS}{quota.id}/", json={"size": 1}, headers=auth(world.admin))
    )
    await out.expect(("service.event.quota.changed", ev, {"quota": quota.id}), organizer_id=org)
    r = await client.post(f"{vh.ENTRIES}{entry['id']}/send_voucher/", headers=auth(world.admin))
    await ok(r, 204)
    entry = await ok(await client.get(f"{vh.ENTRIES}{entry['id']}/", headers=auth(world.admin)))
    await out.expect(
        (
            "service.event.orders.waitinglist.voucher_assigned",
            ev,
            {"waitinglistentry": entry["id"], "voucher": entry["voucher"]},
        ),
        organizer_id=org,
    )
