"""Events, items, quotas, dates and vouchers record their ``service.event.*``,
``service.subevent.*`` and ``service.voucher.*`` types."""

from __future__ import annotations

from sqlalchemy import select

from admit.models import Event, Notification
from tests.factories import World, auth
from tests.notifications.helpers import Outbox, ok
from tests.vouchers import helpers as vh

ORG = "/api/v1/organizers/acme"
E = f"{ORG}/events/summit"


async def test_event_life_cycle(client, world: World, factory):
    out = Outbox(factory)
    await out.skip()
    org = world.org.id
    body = {"name": {"en": "Fresh"}, "slug": "fresh", "date_from": "2031-06-01T10:00:00Z"}
    created = await ok(
        await client.post(f"{ORG}/events/", json=body, headers=auth(world.admin)), 201
    )
    async with factory.sessionmaker() as session:
        fresh = await session.scalar(select(Event.id).where(Event.slug == "fresh"))
    await out.expect(("service.event.added", fresh, {}), organizer_id=org)
    url = f"{ORG}/events/{created['slug']}/"

    async def patch(body: dict) -> list[str]:
        await ok(await client.patch(url, json=body, headers=auth(world.admin)))
        return await out.actions()

    assert await patch({"location": {"en": "Berlin"}}) == ["service.event.changed"]
    await factory.quota(Event(id=fresh))  # going live needs a quota
    assert await patch({"live": True}) == ["service.event.changed", "service.event.live.activated"]
    assert await patch({"live": False, "testmode": True}) == [
        "service.event.changed",
        "service.event.live.deactivated",
        "service.event.testmode.activated",
    ]
    assert await patch({"testmode": False}) == [
        "service.event.changed",
        "service.event.testmode.deactivated",
    ]
    put = {**body, "date_from": "2031-07-01T10:00:00Z"}
    await ok(await client.put(url, json=put, headers=auth(world.admin)))
    await out.expect(("service.event.changed", fresh, {}), organizer_id=org)

    clone = {"name": {"en": "Copy"}, "slug": "copy", "date_from": "2031-06-01T10:00:00Z"}
    r = await client.post(f"{url}clone/", json=clone, headers=auth(world.admin))
    await ok(r, 201)
    assert await out.actions() == ["service.event.added"]

    await ok(await client.delete(url, headers=auth(world.admin)), 204)
    # The row outlives the event it announces: no reference to it, its slug in the payload.
    await out.expect(("service.event.deleted", None, {"event": "fresh"}), organizer_id=org)


async def test_item_life_cycle(client, world: World, factory):
    out = Outbox(factory)
    ev, org = world.event.id, world.org.id
    items = f"{E}/items/"
    created = await ok(
        await client.post(
            items,
            json={"name": {"en": "Shirt"}, "default_price": "5.00"},
            headers=auth(world.admin),
        ),
        201,
    )
    pk = created["id"]
    await out.expect(("service.event.item.added", ev, {"item": pk}), organizer_id=org)
    await ok(await client.patch(f"{items}{pk}/", json={"active": False}, headers=auth(world.admin)))
    await out.expect(("service.event.item.changed", ev, {"item": pk}), organizer_id=org)

    # Variations, add-ons and bundles are parts of their item.
    varied = await ok(
        await client.post(
            items,
            json={
                "name": {"en": "Hoodie"},
                "default_price": "5.00",
                "variations": [{"value": {"en": "S"}}],
            },
            headers=auth(world.admin),
        ),
        201,
    )
    await out.skip()
    variations = f"{items}{varied['id']}/variations/"
    var = await ok(
        await client.post(variations, json={"value": {"en": "M"}}, headers=auth(world.admin)), 201
    )
    await ok(
        await client.patch(
            f"{variations}{var['id']}/", json={"active": False}, headers=auth(world.admin)
        )
    )
    await ok(await client.delete(f"{variations}{var['id']}/", headers=auth(world.admin)), 204)
    await out.expect(
        *[("service.event.item.changed", ev, {"item": varied["id"]})] * 3, organizer_id=org
    )
    bundles = f"{items}{varied['id']}/bundles/"
    await ok(await client.post(bundles, json={"bundled_item": pk}, headers=auth(world.admin)), 201)
    await out.expect(("service.event.item.changed", ev, {"item": varied["id"]}), organizer_id=org)

    await ok(await client.delete(f"{items}{pk}/", headers=auth(world.admin)), 204)
    await out.expect(("service.event.item.deleted", ev, {"item": pk}), organizer_id=org)


async def test_quota_life_cycle(client, world: World, factory):
    """Admit's own quota types, with who made each change."""
    out = Outbox(factory)
    ev, org = world.event.id, world.org.id
    quotas = f"{E}/quotas/"
    made = await ok(
        await client.post(quotas, json={"name": "Hall", "size": 10}, headers=auth(world.admin)),
        201,
    )
    pk = made["id"]
    await out.expect(("service.event.quota.added", ev, {"quota": pk}), organizer_id=org)
    await ok(await client.patch(f"{quotas}{pk}/", json={"size": 20}, headers=auth(world.admin)))
    await out.expect(("service.event.quota.changed", ev, {"quota": pk}), organizer_id=org)
    refused = await client.patch(f"{quotas}{pk}/", json={"size": -1}, headers=auth(world.admin))
    assert refused.status_code == 400
    await ok(await client.delete(f"{quotas}{pk}/", headers=auth(world.admin)), 204)
    await out.expect(("service.event.quota.deleted", ev, {"quota": pk}), organizer_id=org)
    async with factory.sessionmaker() as session:
        kinds = set(
            await session.scalars(
                select(Notification.actor_kind).where(
                    Notification.action.startswith("service.event.quota.")
                )
            )
        )
    assert kinds == {"token"}


async def test_subevent_life_cycle(client, world: World, factory):
    series = await factory.event(world.org, "tour", has_subevents=True)
    out = Outbox(factory)
    await out.skip()
    org = world.org.id
    base = f"{ORG}/events/tour/subevents/"
    body = {"name": {"en": "Day 1"}, "date_from": "2031-01-01T10:00:00Z"}
    sub = await ok(await client.post(base, json=body, headers=auth(world.admin)), 201)
    payload = {"subevent": sub["id"]}
    await out.expect(("service.subevent.added", series.id, payload), organizer_id=org)
    url = f"{base}{sub['id']}/"
    await ok(await client.patch(url, json={"active": True}, headers=auth(world.admin)))
    await out.expect(("service.subevent.changed", series.id, payload), organizer_id=org)
    await ok(await client.delete(url, headers=auth(world.admin)), 204)
    await out.expect(("service.subevent.deleted", series.id, payload), organizer_id=org)


async def test_voucher_life_cycle(client, world: World, factory):
    out = Outbox(factory)
    ev, org = world.event.id, world.org.id
    one = await ok(await client.post(vh.VOUCHERS, json={}, headers=auth(world.admin)), 201)
    await out.expect(("service.voucher.added", ev, {"voucher": one["id"]}), organizer_id=org)

    batch = await ok(
        await client.post(
            f"{vh.VOUCHERS}batch_create/",
            json=[{"code": "BATCH-ONE"}, {"code": "BATCH-TWO"}],
            headers=auth(world.admin),
        ),
        201,
    )
    await out.expect(
        *[("service.voucher.added", ev, {"voucher": v["id"]}) for v in batch], organizer_id=org
    )

    url = f"{vh.VOUCHERS}{one['id']}/"
    await ok(await client.patch(url, json={"comment": "For the press"}, headers=auth(world.admin)))
    await out.expect(("service.voucher.changed", ev, {"voucher": one["id"]}), organizer_id=org)
    await ok(await client.delete(url, headers=auth(world.admin)), 204)
    await out.expect(("service.voucher.deleted", ev, {"voucher": one["id"]}), organizer_id=org)
