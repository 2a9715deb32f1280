"""``transact``: credits and debits, the 409 for missing credit, bad input, the history it
leaves, and the value always equal to the sum of the history."""

from __future__ import annotations

from decimal import Decimal

from tests.factories import World, assert_field_errors, auth
from tests.giftcards.helpers import card, cards_url, ledger

INSUFFICIENT = {"value": ["The gift card does not have sufficient credit for this operation."]}


async def test_credit_and_debit(client, world: World, factory):
    gc = await card(factory, world.org, "50.00")
    url = cards_url(world.org, f"{gc.id}/transact/")
    r = await client.post(
        url,
        json={"value": "2.00", "text": "Goodwill", "info": {"created_by": "box office"}},
        headers=auth(world.admin),
    )
    assert r.status_code == 200, r.text
    assert r.json()["value"] == "52.00" and r.json()["id"] == gc.id
    assert r.json()["issuer"] == "acme" and r.json()["secret"] == gc.secret
    detail = await client.get(cards_url(world.org, f"{gc.id}/"), headers=auth(world.admin))
    assert r.json() == detail.json()
    r = await client.post(url, json={"value": "-52.00"}, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    assert r.json()["value"] == "0.00"

    history = await client.get(
        cards_url(world.org, f"{gc.id}/transactions/"), headers=auth(world.admin)
    )
    rows = history.json()["results"]
    assert [t["value"] for t in rows] == ["50.00", "2.00", "-52.00"]
    assert rows[1]["text"] == "Goodwill" and rows[1]["info"] == {"created_by": "box office"}
    assert rows[2]["text"] is None and rows[2]["info"] is None
    assert all(t["acceptor"] == "acme" for t in rows)
    assert set(rows[1]) == {"id", "datetime", "value", "event", "order", "text", "info", "acceptor"}
    assert await ledger(factory, gc.id) == (Decimal("0.00"), Decimal("0.00"), 3)


async def test_insufficient_credit_is_409_and_changes_nothing(client, world: World, factory):
    gc = await card(factory, world.org, "5.00")
    url = cards_url(world.org, f"{gc.id}/transact/")
    r = await client.post(url, json={"value": "-5.01"}, headers=auth(world.admin))
    assert r.status_code == 409
    assert r.json() == INSUFFICIENT
    assert await ledger(factory, gc.id) == (Decimal("5.00"), Decimal("5.00"), 1)
    # A card may be emptied exactly.
    r = await client.post(url, json={"value": "-5"}, headers=auth(world.admin))
    assert r.status_code == 200 and r.json()["value"] == "0.00"
    r = await client.post(url, json={"value": "-0.01"}, headers=auth(world.admin))
    assert r.status_code == 409 and r.json() == INSUFFICIENT


async def test_cents_add_up_exactly(client, world: World, factory):
    """No binary-float drift (SQLite keeps numbers as floats): ten 0.10 credits pay 1.00."""
    gc = await card(factory, world.org, "0.00")
    url = cards_url(world.org, f"{gc.id}/transact/")
    for _ in range(10):
        r = await client.post(url, json={"value": "0.10"}, headers=auth(world.admin))
        assert r.status_code == 200
    r = await client.post(url, json={"value": "-0.70"}, headers=auth(world.admin))
    assert r.status_code == 200 and r.json()["value"] == "0.30"
    r = await client.post(url, json={"value": "-0.30"}, headers=auth(world.admin))
    assert r.status_code == 200 and r.json()["value"] == "0.00"
    assert await ledger(factory, gc.id) == (Decimal("0.00"), Decimal("0.00"), 13)


async def test_bad_input_is_400(client, world: World, factory):
    gc = await card(factory, world.org, "5.00")
    url = cards_url(world.org, f"{gc.id}/transact/")
    cases = [
        ({}, "value"),
        ({"value": None}, "value"),
        ({"value": "abc"}, "value"),
        ({"value": "1.005"}, "value"),
        ({"value": "1e20"}, "value"),
        ({"value": False}, "value"),
        ({"value": "1", "text": 5}, "text"),
        ({"value": "1", "info": ["x"]}, "info"),
        ({"value": "1", "info": "x"}, "info"),
    ]
    for body, field in cases:
        assert_field_errors(await client.post(url, json=body, headers=auth(world.admin)), field)
    r = await client.post(url, content=b"[1]", headers=auth(world.admin))
    assert_field_errors(r, "non_field_errors")
    assert await ledger(factory, gc.id) == (Decimal("5.00"), Decimal("5.00"), 1)


async def test_value_beyond_storage_is_400(client, world: World, factory):
    gc = await card(factory, world.org, "99999999999.00")
    url = cards_url(world.org, f"{gc.id}/transact/")
    r = await client.post(url, json={"value": "1.00"}, headers=auth(world.admin))
    assert_field_errors(r, "value")
    r = await client.post(url, json={"value": "0.99"}, headers=auth(world.admin))
    assert r.status_code == 200 and r.json()["value"] == "99999999999.99"


async def test_unknown_or_foreign_card_is_404(client, world: World, factory):
    theirs = await card(factory, world.other, "5.00")
    for pk in ("999999", str(theirs.id), "abc", "0", str(2**40)):
        r = await client.post(
            cards_url(world.org, f"{pk}/transact/"), json={"value": "-1"}, headers=auth(world.admin)
        )
        assert r.status_code == 404, (pk, r.text)
    assert await ledger(factory, theirs.id) == (Decimal("5.00"), Decimal("5.00"), 1)


async def test_transact_takes_few_statements(
    client, clean_app, world: World, factory, count_queries
):
    """The hot path: credential, one guarded UPDATE, one INSERT of the transaction with its
    notification (plus BEGIN/COMMIT); SQLite, without data-modifying CTEs and without round
    trips, inserts the notification on its own."""
    gc = await card(factory, world.org, "50.00")
    url = cards_url(world.org, f"{gc.id}/transact/")
    await client.post(url, json={"value": "-1"}, headers=auth(world.admin))  # warm caches
    with count_queries() as q:
        r = await client.post(url, json={"value": "-1"}, headers=auth(world.admin))
    assert r.status_code == 200
    assert q.count <= (4 if clean_app.state.db.is_sqlite else 3), q.statements
