"""Annul (nonce, same device, window, notification) and the check-in history list."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from admit.models import Checkin, Notification
from tests.checkin import helpers as h
from tests.factories import World, assert_field_errors, auth


async def _annul(client, world: World, headers, **body):
    return await client.post(h.rpc_url(world, "annul"), json=body, headers=headers)


async def test_device_scans_record_device_and_gate_and_annul(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event)
    _, (pos,) = await h.order(factory, world.event, item)
    token, device = await h.device(factory, world.org, gate="North", number=7)
    other_token, _ = await h.device(factory, world.org, number=8)
    headers = h.device_auth(token)

    ok = await h.redeem(client, world, pos.secret, [clist.id], headers=headers, nonce="turn-1")
    assert ok.status_code == 201, ok.text
    (checkin,) = ok.json()["position"]["checkins"]
    assert checkin["device"] == device.id and checkin["device_id"] == 7
    assert checkin["gate"] == device.gate_id is not None

    # Another device, a team token: not theirs to annul.
    response = await _annul(
        client, world, h.device_auth(other_token), nonce="turn-1", lists=[clist.id]
    )
    assert response.status_code == 400
    response = await _annul(client, world, auth(world.admin), nonce="turn-1", lists=[clist.id])
    assert response.status_code == 400
    response = await _annul(client, world, headers, nonce="other", lists=[clist.id])
    assert response.status_code == 404
    late = (dt.datetime.now(dt.UTC) + dt.timedelta(minutes=16)).isoformat()
    response = await _annul(client, world, headers, nonce="turn-1", lists=[clist.id], datetime=late)
    assert response.status_code == 400 and "15 minutes" in response.json()["detail"]
    settings = client._transport.app.state.settings
    settings.checkin_annul_window_minutes = 30  # ADMIT_CHECKIN_ANNUL_WINDOW_MINUTES
    try:
        later = (dt.datetime.now(dt.UTC) + dt.timedelta(minutes=31)).isoformat()
        response = await _annul(
            client, world, headers, nonce="turn-1", lists=[clist.id], datetime=later
        )
        assert response.status_code == 400 and "30 minutes" in response.json()["detail"]
    finally:
        settings.checkin_annul_window_minutes = 15

    response = await _annul(
        client, world, headers, nonce="turn-1", lists=[clist.id], error_explanation="Stuck"
    )
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    again = await _annul(client, world, headers, nonce="turn-1", lists=[clist.id])
    assert again.status_code == 400 and "already" in again.json()["detail"]

    async with factory.sessionmaker() as s:
        row = (await s.scalars(select(Checkin))).one()
        notes = [n.action for n in await s.scalars(select(Notification).order_by(Notification.id))]
    assert (row.successful, row.error_reason, row.error_explanation, row.seq) == (
        False, "annulled", "Stuck", None,
    )  # fmt: skip
    assert notes == ["service.event.checkin.reverted"]

    # The ticket is no longer inside: it may enter again.
    assert (
        await h.redeem(client, world, pos.secret, [clist.id], headers=headers)
    ).status_code == 201


async def test_annul_validation(client, world: World, factory):
    clist = await h.checkin_list(factory, world.event)
    foreign = await h.checkin_list(factory, world.other_event)
    headers = auth(world.admin)
    assert_field_errors(
        await _annul(client, world, headers, nonce="x", lists=[foreign.id]), "lists"
    )
    assert_field_errors(await _annul(client, world, headers, lists=[clist.id]), "nonce")
    assert_field_errors(await _annul(client, world, headers, nonce="x"), "lists")
    # failed scans cannot be annulled
    await h.redeem(client, world, "unknown", [clist.id], nonce="f")
    response = await _annul(client, world, headers, nonce="f", lists=[clist.id])
    assert response.status_code == 400


async def test_history_filters_and_ordering(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    entrance = await h.checkin_list(factory, world.event)
    backstage = await h.checkin_list(factory, world.event, "Backstage")
    _, (a, b) = await h.order(factory, world.event, item, n=2)
    early = "2020-01-01T09:00:00Z"
    await h.redeem(client, world, a.secret, [entrance.id], datetime=early)
    await h.redeem(client, world, a.secret, [entrance.id])  # already redeemed
    await h.redeem(client, world, b.secret, [backstage.id])
    await h.redeem(client, world, b.secret, [backstage.id], type="exit")
    await h.redeem(client, world, "bogus", [entrance.id])
    await h.checkin_list(factory, world.other_event)  # another tenant's history is not shown

    url = h.event_url(world, "checkins/")
    headers = auth(world.admin)

    async def get(query: str = "") -> list[dict]:
        response = await client.get(url + query, headers=headers)
        assert response.status_code == 200, response.text
        return response.json()["results"]

    everything = await get()
    assert len(everything) == 5
    assert set(everything[0]) == {
        "id", "successful", "error_reason", "error_explanation", "position", "datetime",
        "created", "list", "auto_checked_in", "gate", "device", "device_id", "type",
    }  # fmt: skip
    assert len(await get("?successful=false")) == 2
    assert [c["error_reason"] for c in await get("?error_reason=invalid")] == ["invalid"]
    assert len(await get(f"?list={backstage.id}")) == 2
    assert len(await get("?type=exit")) == 1
    assert len(await get("?datetime_before=2020-01-01T09:00:01Z")) == 1
    assert len(await get("?datetime_since=2020-01-01T09:00:01Z")) == 4
    assert len(await get("?auto_checked_in=true")) == 0
    assert len(await get("?device=1")) == 0
    ordered = await get("?ordering=-datetime")
    assert ordered[-1]["datetime"] == early
    for bad in ("?successful=maybe", "?error_reason=nope", "?type=in",
                "?created_since=yesterday", "?list=x"):  # fmt: skip
        assert_field_errors(await client.get(url + bad, headers=headers))
    one = everything[0]
    detail = await client.get(url + f"{one['id']}/", headers=headers)
    assert detail.status_code == 200 and detail.json() == one
