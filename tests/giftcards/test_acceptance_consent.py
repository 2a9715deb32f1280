"""Gift card acceptance needs the acceptor's consent (issue 35): the issuer alone could make
another organizer redeem its cards, learn from the answer whether a slug exists, and hand an
acceptor a card with the secret of one it held already (the one typed at the box office then
names two cards). Checked at issue time and at accepting time, and under concurrency."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from admit.giftcards import service
from admit.models import GiftCard
from tests.factories import World, auth
from tests.giftcards.helpers import accept, acceptances_url, card, cards_url


async def offer(client, world: World, acceptor: str) -> dict:
    r = await client.post(
        acceptances_url(world.org), json={"acceptor": acceptor}, headers=auth(world.admin)
    )
    assert r.status_code == 201, r.text
    return r.json()


async def test_the_issuer_alone_grants_nothing(client, world: World, factory):
    gc = await card(factory, world.org, "30.00")
    grant = await offer(client, world, "rival")
    rival = auth(world.outsider)
    listed = await client.get(cards_url(world.other, "?include_accepted=true"), headers=rival)
    assert listed.json()["count"] == 0
    url = cards_url(world.other, f"{gc.id}/transact/?include_accepted=true")
    assert (await client.post(url, json={"value": "-1"}, headers=rival)).status_code == 404
    # Only the acceptor's side makes it count; the issuer cannot set it.
    mine = acceptances_url(world.org, f"{grant['id']}/")
    for method in ("PATCH", "PUT"):
        r = await client.request(
            method, mine, json={"active": True, "accepted": True}, headers=auth(world.admin)
        )
        assert r.status_code == 403, r.text
    theirs = acceptances_url(world.other, f"{grant['id']}/")
    assert (await client.patch(theirs, json={"accepted": True}, headers=rival)).status_code == 200
    assert (await client.post(url, json={"value": "-1"}, headers=rival)).status_code == 200


async def test_an_offer_does_not_tell_whether_a_slug_exists(client, world: World, factory):
    missing = await offer(client, world, "nobody-here")
    existing = await offer(client, world, "rival")

    def shape(answer: dict) -> dict:
        return {k: v for k, v in answer.items() if k not in ("id", "created", "acceptor")}

    assert shape(missing) == shape(existing)
    assert (missing["acceptor"], existing["acceptor"]) == ("nobody-here", "rival")
    # A second offer to either is refused alike.
    for slug in ("nobody-here", "rival"):
        r = await client.post(
            acceptances_url(world.org), json={"acceptor": slug}, headers=auth(world.admin)
        )
        assert r.status_code == 400
        assert r.json() == {"acceptor": ["Your gift cards are offered to it already."]}
    # The offer to a missing slug is visible only to its issuer.
    rival = await client.get(acceptances_url(world.other), headers=auth(world.outsider))
    assert [a["id"] for a in rival.json()["results"]] == [existing["id"]]


async def test_no_two_redeemable_cards_with_one_secret_at_issue_time(client, world: World, factory):
    third = await factory.organizer("third")
    await accept(factory, world.org, world.other)  # rival accepts acme's cards
    await accept(factory, third, world.other)  # and third's
    await card(factory, world.other, secret="RIVALSOWN")
    await card(factory, third, secret="THIRDS")
    headers = auth(world.admin)
    for secret in ("rivalsown", "THIRDS"):
        r = await client.post(
            cards_url(world.org),
            json={"secret": secret, "currency": "EUR", "value": "10.00"},
            headers=headers,
        )
        assert r.status_code == 400, r.text
        assert r.json() == {"secret": [service.SECRET_TAKEN]}
    fine = await client.post(
        cards_url(world.org),
        json={"secret": "ACMES", "currency": "EUR", "value": "10.00"},
        headers=headers,
    )
    assert fine.status_code == 201, fine.text


async def test_no_two_redeemable_cards_with_one_secret_at_accepting_time(
    client, world: World, factory
):
    await card(factory, world.org, secret="SHARED")
    await card(factory, world.other, secret="shared")
    grant = await offer(client, world, "rival")
    theirs = acceptances_url(world.other, f"{grant['id']}/")
    r = await client.patch(theirs, json={"accepted": True}, headers=auth(world.outsider))
    assert r.status_code == 400, r.text
    assert list(r.json()) == ["accepted"]
    # Accepted while the offer was off, then switched on by the issuer: refused too.
    mine = acceptances_url(world.org, f"{grant['id']}/")
    assert (
        await client.patch(mine, json={"active": False}, headers=auth(world.admin))
    ).status_code == 200
    r = await client.patch(theirs, json={"accepted": True}, headers=auth(world.outsider))
    assert r.status_code == 200, r.text
    r = await client.patch(mine, json={"active": True}, headers=auth(world.admin))
    assert r.status_code == 400, r.text
    assert list(r.json()) == ["active"]


async def test_two_issuers_creating_one_secret_at_once(client, clean_app, world: World, factory):
    """PostgreSQL: acme's card is inserted (uncommitted) while third issues the same secret
    for rival, who accepts both. Third's request waits for acme's transaction, then sees the
    card and is refused; without the lock both committed and rival held two cards."""
    if not clean_app.state.db.fast.native:
        pytest.skip("the race needs PostgreSQL's concurrent writers (SQLite has one)")
    third = await factory.organizer("third")
    third_token = await factory.admin_token(third)
    await accept(factory, world.org, world.other)
    await accept(factory, third, world.other)
    async with clean_app.state.db.sessionmaker() as first:
        assert not await service.secret_taken(first, world.org.id, "RACE")
        first.add(GiftCard(issuer_id=world.org.id, secret="RACE", currency="EUR"))
        await first.flush()
        second = asyncio.create_task(
            client.post(
                cards_url(third), json={"secret": "race", "currency": "EUR", "value": "1.00"},
                headers=auth(third_token),
            )
        )  # fmt: skip
        await asyncio.sleep(1.5)
        assert not second.done(), (await second).text  # it waits for the first transaction
        await first.commit()
    answer = await asyncio.wait_for(second, 30)
    assert answer.status_code == 400, answer.text
    assert answer.json() == {"secret": [service.SECRET_TAKEN]}
    async with clean_app.state.db.sessionmaker() as s:
        found = await s.scalar(
            select(func.count()).select_from(GiftCard).where(func.lower(GiftCard.secret) == "race")
        )
    assert found == 1
