"""Signed ticket secrets (``pretix_sig1``, issue 29): the setting, the event's key, the secrets
of new tickets as an independent decoder reads them, and re-issue on change.

The decoder (``decoder.py``) is written from the wire format alone; every secret checked here
is verified with the public key the event publishes in ``valid_keys``.
"""

from __future__ import annotations

import base64
import datetime as dt

import pytest
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from sqlalchemy import select

from admit.models import EventTicketKey, Item, SubEvent
from admit.orders import lane
from admit.tickets.secrets import keys
from admit.tickets.secrets.generator import Issuer
from admit.tickets.secrets.keys import new_pair
from tests.checkin import helpers as ch
from tests.factories import World, auth
from tests.lane_spy import record_outcomes
from tests.orders import helpers as oh
from tests.signed import decoder
from tests.signed.helpers import change, check_certifies, event_url, sell, sign_event

WINDOW = (dt.datetime(2031, 5, 1, 8, tzinfo=dt.UTC), dt.datetime(2031, 5, 3, 22, tzinfo=dt.UTC))


async def test_setting_is_random_until_switched_and_switching_publishes_a_key(
    client, world: World, factory
):
    settings = await client.get(event_url(world, "settings/"), headers=auth(world.admin))
    assert settings.json()["ticket_secret_generator"] == "random"
    explained = await client.get(event_url(world, "settings/?explain"), headers=auth(world.admin))
    assert explained.json()["ticket_secret_generator"]["label"] == "Ticket code generator"
    detail = await client.get(event_url(world), headers=auth(world.admin))
    assert detail.json()["valid_keys"] == {}

    bad = await client.patch(
        event_url(world, "settings/"),
        json={"ticket_secret_generator": "rot13"},
        headers=auth(world.admin),
    )
    assert bad.status_code == 400 and "ticket_secret_generator" in bad.json()
    denied = await client.patch(
        event_url(world, "settings/"),
        json={"ticket_secret_generator": "pretix_sig1"},
        headers=auth(world.nobody),
    )
    assert denied.status_code == 403

    key = await sign_event(client, world)
    pem = base64.b64decode(key).decode()
    assert pem.startswith("-----BEGIN PUBLIC KEY-----")
    decoder.public_key(key)  # an Ed25519 key
    # Switching again keeps the key; lists leave it out.
    assert await sign_event(client, world) == key
    listed = await client.get(
        f"/api/v1/organizers/{world.org.slug}/events/", headers=auth(world.admin)
    )
    [summit] = [e for e in listed.json()["results"] if e["slug"] == world.event.slug]
    assert "valid_keys" not in summit  # detail only, as the reference has it
    async with factory.sessionmaker() as s:
        rows = list(await s.scalars(select(EventTicketKey)))
    assert [(r.event_id, r.public_key) for r in rows] == [(world.event.id, key)]

    # Back to random: new tickets get random secrets again, the key stays published.
    item = await oh.item(factory, world.event)
    back = await client.patch(
        event_url(world, "settings/"),
        json={"ticket_secret_generator": None},
        headers=auth(world.admin),
    )
    assert back.json()["ticket_secret_generator"] == "random"
    order = await sell(client, world, [{"item": item.id}])
    with pytest.raises(decoder.Rejected):
        decoder.decode(order["positions"][0]["secret"], decoder.public_key(key))


async def test_new_tickets_carry_signed_secrets_an_independent_decoder_verifies(
    client, world: World, factory
):
    key = await sign_event(client, world)
    item = await oh.item(
        factory,
        world.event,
        validity_mode="fixed",
        validity_fixed_from=WINDOW[0],
        validity_fixed_until=WINDOW[1],
    )
    quota = await oh.quota_of(factory, item.id)
    red = await oh.variation(factory, item, "12.00", quota.id)
    plain = await oh.item(factory, world.event, name="Day")
    order = await sell(
        client,
        world,
        [
            {"item": item.id, "variation": red.id},
            {"item": item.id, "variation": red.id},
            {"item": plain.id},
        ],
    )
    secrets = [p["secret"] for p in order["positions"]]
    assert len(set(secrets)) == 3
    for position in order["positions"]:
        check_certifies(position["secret"], key, position)
    first = check_certifies(secrets[0], key, order["positions"][0])
    assert (first.item, first.variation) == (item.id, red.id)
    assert first.valid_from == int(WINDOW[0].timestamp())
    assert first.valid_until == int(WINDOW[1].timestamp())
    assert (check_certifies(secrets[2], key, order["positions"][2]).valid_from) is None

    # What a scanner must refuse: a flipped byte, another event's key, garbage.
    raw = bytearray(base64.b64decode(secrets[0][::-1]))
    for index in (7, len(raw) - 3):  # in the payload, in the signature
        flipped = bytearray(raw)
        flipped[index] ^= 0x01
        forged = base64.b64encode(bytes(flipped)).decode()[::-1]
        with pytest.raises(decoder.Rejected) as refused:
            decoder.decode(forged, decoder.public_key(key))
        assert refused.value.reason == "signature"
    stranger, _ = new_pair()  # another key pair
    with pytest.raises(decoder.Rejected) as wrong:
        decoder.decode(secrets[0], decoder.public_key(stranger))
    assert wrong.value.reason == "signature"
    with pytest.raises(decoder.Rejected):
        decoder.decode("not a ticket", decoder.public_key(key))

    # The signed secret is the ticket's secret: the server checks it in.
    entrance = await ch.checkin_list(factory, world.event)
    scanned = await ch.redeem(client, world, secrets[2], [entrance.id])
    assert scanned.status_code == 201, scanned.text
    assert scanned.json()["position"]["secret"] == secrets[2]


async def test_series_dates_are_certified(client, world: World, factory):
    async with factory.sessionmaker() as s:
        event = await s.get(type(world.event), world.event.id)
        event.has_subevents = True
        date = SubEvent(
            event_id=event.id,
            name={"en": "Day 1"},
            active=True,
            date_from=dt.datetime(2031, 6, 1, 9, tzinfo=dt.UTC),
        )
        s.add(date)
        await s.commit()
    key = await sign_event(client, world)
    item = await oh.item(factory, world.event, quota=False)
    await factory.quota(world.event, 10, items=[await _get(factory, item.id)], subevent=date)
    order = await sell(client, world, [{"item": item.id, "subevent": date.id}])
    ticket = check_certifies(order["positions"][0]["secret"], key, order["positions"][0])
    assert ticket.subevent == date.id


async def _get(factory, item_id: int) -> Item:
    async with factory.sessionmaker() as s:
        return await s.get(Item, item_id)


async def test_secrets_are_reissued_when_what_they_certify_changes(client, world: World, factory):
    key = await sign_event(client, world)
    item = await oh.item(factory, world.event)
    other = await oh.item(factory, world.event, name="VIP")
    order = await sell(client, world, [{"item": item.id}, {"item": item.id}])
    code = order["code"]
    first, second = order["positions"]

    # Product change: a new secret certifying the new product; the old one is revoked.
    moved = await change(
        client, world, code, patch_positions=[{"position": first["id"], "body": {"item": other.id}}]
    )
    assert moved.status_code == 200, moved.text
    now_first = next(p for p in moved.json()["positions"] if p["id"] == first["id"])
    assert now_first["secret"] != first["secret"]
    assert check_certifies(now_first["secret"], key, now_first).item == other.id

    # Validity change through the position's PATCH.
    until = "2031-01-01T00:00:00+00:00"
    patched = await client.patch(
        event_url(world, f"orderpositions/{second['id']}/"),
        json={"valid_until": until},
        headers=auth(world.admin),
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["secret"] != second["secret"]
    assert check_certifies(patched.json()["secret"], key, patched.json()).valid_until == (
        int(dt.datetime(2031, 1, 1, tzinfo=dt.UTC).timestamp())
    )
    # An attendee name change certifies nothing new: the secret stays.
    named = await client.patch(
        event_url(world, f"orderpositions/{second['id']}/"),
        json={"attendee_name": "Ada"},
        headers=auth(world.admin),
    )
    assert named.json()["secret"] == patched.json()["secret"]

    # regenerate_secrets: every ticket gets a new signed secret.
    before = [now_first["secret"], patched.json()["secret"]]
    regenerated = await client.post(
        event_url(world, f"orders/{code}/regenerate_secrets/"), headers=auth(world.admin)
    )
    assert regenerated.status_code == 200, regenerated.text
    after = regenerated.json()["positions"]
    assert not {p["secret"] for p in after} & set(before)
    for position in after:
        check_certifies(position["secret"], key, position)

    # Added by a change: signed too.
    added = await change(client, world, code, create_positions=[{"item": item.id}])
    assert added.status_code == 200, added.text
    new = max(added.json()["positions"], key=lambda p: p["id"])
    check_certifies(new["secret"], key, new)

    revoked = await client.get(event_url(world, "revokedsecrets/"), headers=auth(world.admin))
    assert revoked.status_code == 200
    listed = {r["secret"] for r in revoked.json()["results"]}
    assert {first["secret"], second["secret"], *before} <= listed
    assert not listed & {p["secret"] for p in after}


async def test_clone_gets_a_fresh_key_pair(client, world: World, factory):
    key = await sign_event(client, world)
    cloned = await client.post(
        f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/clone/",
        json={"slug": "summit2", "name": {"en": "Summit 2"}, "date_from": "2031-01-01T10:00:00Z"},
        headers=auth(world.admin),
    )
    assert cloned.status_code == 201, cloned.text
    copy_keys = cloned.json()["valid_keys"]["pretix_sig1"]
    assert copy_keys and copy_keys != [key]
    async with factory.sessionmaker() as s:
        rows = {r.event_id: r.private_key for r in await s.scalars(select(EventTicketKey))}
    assert len(rows) == 2 and len(set(rows.values())) == 2


async def test_the_order_lane_signs_too(client, world: World, factory, clean_app, monkeypatch):
    """On PostgreSQL plain sales take the order lane: it signs with the key this process
    holds, and hands a sale to the general path only while it has none."""
    outcomes = record_outcomes(clean_app, monkeypatch, lane._orders)  # skips on SQLite
    key = await sign_event(client, world)
    item = await oh.item(factory, world.event)
    orders = [await sell(client, world, [{"item": item.id}, {"item": item.id}]) for _ in range(3)]
    assert outcomes == ["done"] * 3
    for order in orders:
        for position in order["positions"]:
            check_certifies(position["secret"], key, position)

    # A worker that has not seen the key yet (a fresh process): the general path loads it.
    keys._signers.clear()
    order = await sell(client, world, [{"item": item.id}])
    assert outcomes == ["done"] * 3
    check_certifies(order["positions"][0]["secret"], key, order["positions"][0])
    await sell(client, world, [{"item": item.id}])
    assert outcomes == ["done"] * 4


def test_thousands_of_issued_secrets_verify_offline():
    """4,000 secrets from Admit's issuer (about 1 s on a quiet machine), of varied products,
    variations, dates and windows (none, open-ended, both ends; ids up to 2**40), all verify
    with the stand-alone decoder and decode to what they were issued for; all distinct."""
    public, private = new_pair()
    issuer = Issuer(load_pem_private_key(private.encode(), password=None))  # type: ignore[arg-type]
    key = decoder.public_key(public)
    base = dt.datetime(2031, 1, 1, tzinfo=dt.UTC)
    seen = set()
    for n in range(4_000):
        start = base + dt.timedelta(minutes=n) if n % 3 else None
        end = base + dt.timedelta(days=2, minutes=n) if n % 4 else None
        fields = {
            "item": 1 + n * 7919 % (1 << 40),
            "variation": n % 5 or None,
            "subevent": (n * 31) % 997 or None,
            "valid_from": start,
            "valid_until": end,
        }
        secret = issuer.issue(**fields)
        ticket = decoder.decode(secret, key)
        assert (ticket.item, ticket.variation, ticket.subevent) == (
            fields["item"], fields["variation"] or 0, fields["subevent"] or 0,
        )  # fmt: skip
        assert ticket.valid_from == (int(start.timestamp()) if start else None)
        assert ticket.valid_until == (int(end.timestamp()) if end else None)
        seen.add(secret)
    assert len(seen) == 4_000
