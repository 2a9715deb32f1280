"""Acceptance between organizers: offered by the issuer and accepted by the acceptor, it lets
the acceptor list and transact on the issuer's cards (``include_accepted=true``) but not
update them. The issuer alone grants nothing; an offer does not tell whether a slug exists;
no organizer ends up with two redeemable cards under one secret."""

from __future__ import annotations

from decimal import Decimal

from tests.factories import World, assert_field_errors, auth
from tests.giftcards.helpers import accept, acceptances_url, card, cards_url, ledger


async def test_issuer_offers_acceptor_accepts_and_uses_cards(client, world: World, factory):
    gc = await card(factory, world.org, "30.00")
    r = await client.post(
        acceptances_url(world.org), json={"acceptor": "rival"}, headers=auth(world.admin)
    )
    assert r.status_code == 201, r.text
    grant = r.json()
    assert (grant["issuer"], grant["acceptor"], grant["active"]) == ("acme", "rival", True)
    assert grant["accepted"] is False

    rival = auth(world.outsider)
    # Both sides see the acceptance.
    for org, headers in ((world.org, auth(world.admin)), (world.other, rival)):
        listed = await client.get(acceptances_url(org), headers=headers)
        assert [a["id"] for a in listed.json()["results"]] == [grant["id"]]

    # The issuer's offer alone grants nothing: the cards stay the issuer's.
    offered = await client.get(cards_url(world.other, "?include_accepted=true"), headers=rival)
    assert offered.json()["count"] == 0
    mine = acceptances_url(world.org, f"{grant['id']}/")
    r = await client.patch(mine, json={"accepted": True}, headers=auth(world.admin))
    assert r.status_code == 403, r.text
    r = await client.patch(
        acceptances_url(world.other, f"{grant['id']}/"), json={"accepted": True}, headers=rival
    )
    assert r.status_code == 200, r.text
    assert (r.json()["active"], r.json()["accepted"]) == (True, True)

    own_only = await client.get(cards_url(world.other), headers=rival)
    assert own_only.json()["count"] == 0
    accepted = await client.get(cards_url(world.other, "?include_accepted=true"), headers=rival)
    [seen] = accepted.json()["results"]
    assert seen["id"] == gc.id and seen["issuer"] == "acme"
    detail = await client.get(
        cards_url(world.other, f"{gc.id}/?include_accepted=true"), headers=rival
    )
    assert detail.status_code == 200
    assert (await client.get(cards_url(world.other, f"{gc.id}/"), headers=rival)).status_code == 404

    url = cards_url(world.other, f"{gc.id}/transact/?include_accepted=true")
    r = await client.post(url, json={"value": "-12.50", "text": "Bar"}, headers=rival)
    assert r.status_code == 200, r.text
    assert r.json()["value"] == "17.50" and r.json()["issuer"] == "acme"
    r = await client.post(url, json={"value": "-20.00"}, headers=rival)
    assert r.status_code == 409

    history = await client.get(
        cards_url(world.org, f"{gc.id}/transactions/"), headers=auth(world.admin)
    )
    assert [t["acceptor"] for t in history.json()["results"]] == ["acme", "rival"]
    assert await ledger(factory, gc.id) == (Decimal("17.50"), Decimal("17.50"), 2)


async def test_acceptor_cannot_update_accepted_cards(client, world: World, factory):
    gc = await card(factory, world.org, "30.00")
    await accept(factory, world.org, world.other)
    rival = auth(world.outsider)
    url = cards_url(world.other, f"{gc.id}/")
    r = await client.patch(f"{url}?include_accepted=true", json={"value": "999"}, headers=rival)
    assert r.status_code == 403
    assert r.json() == {"detail": "Accepted gift cards cannot be updated, use transact instead."}
    assert (await client.patch(url, json={"value": "999"}, headers=rival)).status_code == 404
    assert await ledger(factory, gc.id) == (Decimal("30.00"), Decimal("30.00"), 1)
    # The issuer may still update with the flag set: the card is its own.
    r = await client.patch(
        cards_url(world.org, f"{gc.id}/?include_accepted=true"),
        json={"conditions": "x"},
        headers=auth(world.admin),
    )
    assert r.status_code == 200


async def test_inactive_or_reverse_acceptance_grants_nothing(client, world: World, factory):
    gc = await card(factory, world.org)
    theirs = await card(factory, world.other)
    grant = await accept(factory, world.org, world.other, active=False)
    rival = auth(world.outsider)
    r = await client.get(cards_url(world.other, "?include_accepted=true"), headers=rival)
    assert [c["id"] for c in r.json()["results"]] == [theirs.id]
    url = cards_url(world.other, f"{gc.id}/transact/?include_accepted=true")
    assert (await client.post(url, json={"value": "-1"}, headers=rival)).status_code == 404
    # acme accepting nothing of rival's: rival's card stays invisible to acme.
    r = await client.get(cards_url(world.org, "?include_accepted=true"), headers=auth(world.admin))
    assert [c["id"] for c in r.json()["results"]] == [gc.id]

    r = await client.patch(
        acceptances_url(world.org, f"{grant.id}/"), json={"active": True}, headers=auth(world.admin)
    )
    assert r.status_code == 200 and r.json()["active"] is True
    assert (await client.post(url, json={"value": "-1"}, headers=rival)).status_code == 200


async def test_only_the_issuer_changes_and_either_side_ends_it(client, world: World, factory):
    grant = await accept(factory, world.org, world.other)
    rival = auth(world.outsider)
    url = acceptances_url(world.other, f"{grant.id}/")
    r = await client.patch(url, json={"active": False}, headers=rival)
    assert r.status_code == 403
    r = await client.put(url, json={"active": False}, headers=rival)
    assert r.status_code == 403
    # The acceptor's own side: it may stop accepting, and accept again.
    r = await client.patch(url, json={"accepted": False}, headers=rival)
    assert r.status_code == 200 and r.json()["accepted"] is False
    r = await client.put(url, json={"accepted": True}, headers=rival)
    assert r.status_code == 200 and r.json()["accepted"] is True
    assert (await client.delete(url, headers=rival)).status_code == 204
    assert (await client.get(url, headers=rival)).status_code == 404
    r = await client.get(acceptances_url(world.org), headers=auth(world.admin))
    assert r.json()["count"] == 0


async def test_grant_validation(client, world: World, factory):
    headers = auth(world.admin)
    for body in ({}, {"acceptor": "acme"}, {"acceptor": 5}):
        r = await client.post(acceptances_url(world.org), json=body, headers=headers)
        assert_field_errors(r, "acceptor")
    r = await client.post(acceptances_url(world.org), json={"acceptor": "rival"}, headers=headers)
    assert r.status_code == 201
    url = acceptances_url(world.org, f"{r.json()['id']}/")
    r = await client.post(acceptances_url(world.org), json={"acceptor": "rival"}, headers=headers)
    assert_field_errors(r, "acceptor")
    r = await client.patch(url, json={"active": "sometimes"}, headers=headers)
    assert_field_errors(r, "active")
    assert_field_errors(await client.put(url, json={}, headers=headers), "active")


async def test_filters(client, world: World, factory):
    third = await factory.organizer("third")
    a = await accept(factory, world.org, world.other)
    b = await accept(factory, third, world.org, active=False)
    headers = auth(world.admin)

    async def ids(query: str) -> list[int]:
        r = await client.get(acceptances_url(world.org, query), headers=headers)
        assert r.status_code == 200, r.text
        return [x["id"] for x in r.json()["results"]]

    assert await ids("") == [a.id, b.id]
    assert await ids("?issuer=acme") == [a.id]
    assert await ids("?acceptor=acme") == [b.id]
    assert await ids("?active=false") == [b.id]
    r = await client.get(acceptances_url(world.org, "?active=perhaps"), headers=headers)
    assert r.status_code == 400
