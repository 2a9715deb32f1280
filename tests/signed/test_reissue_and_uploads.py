"""What the first signed-secret tests left open (issue 29 audit): a change of variation or
of date re-issues the secret (the old one revoked, the new one certifying the change), and an
uploaded offline scan is judged by the time it was made: outside the ticket's validity it is
``invalid_time`` unless forced, as the reference's ``force`` says."""

from __future__ import annotations

import datetime as dt

from admit.models import SubEvent
from tests.checkin import helpers as ch
from tests.factories import World, auth
from tests.orders import helpers as oh
from tests.signed.helpers import change, check_certifies, event_url, sell, sign_event


async def _revoked(client, world: World) -> set[str]:
    listed = await client.get(event_url(world, "revokedsecrets/"), headers=auth(world.admin))
    assert listed.status_code == 200, listed.text
    return {r["secret"] for r in listed.json()["results"]}


async def test_variation_change_reissues_the_secret(client, world: World, factory):
    key = await sign_event(client, world)
    item = await oh.item(factory, world.event)
    quota = await oh.quota_of(factory, item.id)
    red = await oh.variation(factory, item, None, quota.id)
    blue = await oh.variation(factory, item, None, quota.id)
    order = await sell(client, world, [{"item": item.id, "variation": red.id}])
    (before,) = order["positions"]
    assert check_certifies(before["secret"], key, before).variation == red.id
    moved = await change(
        client,
        world,
        order["code"],
        patch_positions=[{"position": before["id"], "body": {"variation": blue.id}}],
    )
    assert moved.status_code == 200, moved.text
    (after,) = moved.json()["positions"]
    assert after["secret"] != before["secret"]
    assert check_certifies(after["secret"], key, after).variation == blue.id
    revoked = await _revoked(client, world)
    assert before["secret"] in revoked and after["secret"] not in revoked


async def test_date_change_reissues_the_secret(client, world: World, factory):
    async with factory.sessionmaker() as s:
        event = await s.get(type(world.event), world.event.id)
        event.has_subevents = True
        days = [
            SubEvent(
                event_id=event.id,
                name={"en": f"Day {n}"},
                active=True,
                date_from=dt.datetime(2031, 6, n, 9, tzinfo=dt.UTC),
            )
            for n in (1, 2)
        ]
        s.add_all(days)
        await s.commit()
    key = await sign_event(client, world)
    item = await oh.item(factory, world.event, quota=False)
    for day in days:
        await factory.quota(world.event, 10, items=[item], subevent=day)
    order = await sell(client, world, [{"item": item.id, "subevent": days[0].id}])
    (before,) = order["positions"]
    assert check_certifies(before["secret"], key, before).subevent == days[0].id
    moved = await change(
        client,
        world,
        order["code"],
        patch_positions=[{"position": before["id"], "body": {"subevent": days[1].id}}],
    )
    assert moved.status_code == 200, moved.text
    (after,) = moved.json()["positions"]
    assert after["secret"] != before["secret"]
    assert check_certifies(after["secret"], key, after).subevent == days[1].id
    assert before["secret"] in await _revoked(client, world)
    # The replaced secret, scanned, is ``revoked``; the new one is admitted.
    entrance = await ch.checkin_list(factory, world.event, subevent_id=days[1].id)
    old = await ch.redeem(client, world, before["secret"], [entrance.id])
    assert old.json()["reason"] == "revoked", old.text
    new = await ch.redeem(client, world, after["secret"], [entrance.id])
    assert new.status_code == 201, new.text


async def test_uploaded_scans_are_judged_by_when_they_were_made(client, world: World, factory):
    await sign_event(client, world)
    start = dt.datetime.now(dt.UTC) - dt.timedelta(days=2)
    item = await oh.item(
        factory,
        world.event,
        validity_mode="fixed",
        validity_fixed_from=start,
        validity_fixed_until=start + dt.timedelta(hours=2),
    )
    order = await sell(client, world, [{"item": item.id}])
    secret = order["positions"][0]["secret"]
    entrance = await ch.checkin_list(factory, world.event, allow_multiple_entries=True)
    # Now is after the window: online, refused.
    late = await ch.redeem(client, world, secret, [entrance.id])
    assert (late.status_code, late.json()["reason"]) == (200, "invalid_time")
    # Made before the window opened, uploaded now: refused for its own time.
    early = (start - dt.timedelta(minutes=30)).isoformat()
    before = await ch.redeem(client, world, secret, [entrance.id], datetime=early, nonce="e1")
    assert (before.status_code, before.json()["reason"]) == (200, "invalid_time")
    # The same scan uploaded as forced (it happened; the door let them in): recorded.
    forced = await ch.redeem(
        client, world, secret, [entrance.id], datetime=early, nonce="e2", force=True
    )
    assert forced.status_code == 201, forced.text
    # Made inside the window: admitted as an entry of that time.
    inside = (start + dt.timedelta(minutes=10)).isoformat()
    within = await ch.redeem(client, world, secret, [entrance.id], datetime=inside, nonce="i1")
    assert within.status_code == 201, within.text
    history = await client.get(
        event_url(world, "checkins/"), params={"list": entrance.id}, headers=auth(world.admin)
    )
    rows = history.json()["results"]
    assert sum(r["successful"] for r in rows) == 2
    assert [r["error_reason"] for r in rows if not r["successful"]] == ["invalid_time"] * 2
