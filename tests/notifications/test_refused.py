"""A refused or rolled-back operation leaves no notification: the row is written in the
request's transaction, so whatever undoes the change undoes its announcement."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from admit.giftcards import routes as giftcard_routes
from admit.kit.http.errors import FieldErrors
from admit.models import Notification
from admit.notifications.notify import notify
from tests.factories import World, auth
from tests.giftcards.helpers import card, cards_url
from tests.notifications.helpers import Outbox
from tests.orders import helpers as h
from tests.vouchers import helpers as vh


async def test_refused_operations_record_nothing(client, world: World, factory):
    item = await h.item(factory, world.event, quota=1)
    admin = auth(world.admin)
    order = (await client.post(h.url(world), json=h.body(item.id), headers=admin)).json()
    paid = await client.post(h.url(world, f"orders/{order['code']}/mark_paid/"), headers=admin)
    assert paid.status_code == 200
    gc = await card(factory, world.org, "5.00")
    out = Outbox(factory)
    await out.skip()

    refused = [
        # Sold out (400), paid twice (400), the last position (400), an event with orders (403).
        await client.post(h.url(world), json=h.body(item.id), headers=admin),
        await client.post(h.url(world, f"orders/{order['code']}/mark_paid/"), headers=admin),
        await client.delete(
            h.url(world, f"orderpositions/{order['positions'][0]['id']}/"), headers=admin
        ),
        await client.delete(f"/api/v1/organizers/acme/events/{world.event.slug}/", headers=admin),
        # A batch with one bad voucher writes none (400); too little credit (409).
        await client.post(
            f"{vh.VOUCHERS}batch_create/", json=[{"code": "GOOD-ONE"}, {"code": "x"}], headers=admin
        ),
        await client.post(
            cards_url(world.org, f"{gc.id}/transact/"), json={"value": "-9"}, headers=admin
        ),
        # Not allowed for this caller (403).
        await client.post(f"{vh.VOUCHERS}", json={}, headers=auth(world.nobody)),
    ]
    assert [r.status_code for r in refused] == [400, 400, 400, 403, 400, 409, 403]
    assert await out.new() == []


async def test_failure_after_the_notification_rolls_it_back(
    client, world: World, factory, monkeypatch
):
    """The gift card is created and announced, then the request fails: neither remains."""
    out = Outbox(factory)

    async def failing_render(*_args: object, **_kw: object) -> None:
        raise FieldErrors.single("value", "Refused after the write.")

    monkeypatch.setattr(giftcard_routes, "render_card", failing_render)
    r = await client.post(
        cards_url(world.org), json={"currency": "EUR", "value": "1.00"}, headers=auth(world.admin)
    )
    assert r.status_code == 400
    assert await out.new() == []


async def test_only_known_types_and_own_keys(clean_app, world: World):
    async with clean_app.state.db.sessionmaker() as session:
        with pytest.raises(ValueError, match="unknown notification type"):
            await notify(session, "service.event.order.teleported", organizer_id=world.org.id)
        with pytest.raises(ValueError, match="set by the fan-out"):
            await notify(
                session,
                "service.event.changed",
                organizer_id=world.org.id,
                event_id=world.event.id,
                event="summit",
            )
        # A member of a ``.*`` family is a known type; rolled back, its row is gone.
        await notify(
            session,
            "service.event.item.changed",
            organizer_id=world.org.id,
            event_id=world.event.id,
            item=1,
        )
        assert await session.scalar(select(func.count()).select_from(Notification)) == 1
        await session.rollback()
    async with clean_app.state.db.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(Notification)) == 0
