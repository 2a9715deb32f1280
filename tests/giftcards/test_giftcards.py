"""Gift card CRUD: round trip, generated secrets, PATCH/PUT (value changes become
transactions), owner tickets and ``expand``, filters, DELETE 405, tenancy and permissions."""

from __future__ import annotations

from decimal import Decimal

from admit.giftcards.service import SECRET_ALPHABET, SECRET_LENGTH
from tests.factories import World, assert_field_errors, auth
from tests.giftcards.helpers import accept, card, cards_url, in_days, ledger, ticket


async def test_create_round_trip(client, world: World):
    body = {
        "secret": "SUMMER-2030",
        "currency": "EUR",
        "value": "13.37",
        "testmode": True,
        "expires": "2031-01-01T00:00:00Z",
        "conditions": "Valid for workshops only.",
    }
    created = await client.post(cards_url(world.org), json=body, headers=auth(world.admin))
    assert created.status_code == 201, created.text
    data = created.json()
    assert data == {
        **body,
        "id": data["id"],
        "issuance": data["issuance"],
        "owner_ticket": None,
        "issuer": "acme",
    }
    assert data["issuance"].endswith("Z")
    detail = await client.get(cards_url(world.org, f"{data['id']}/"), headers=auth(world.admin))
    assert detail.status_code == 200 and detail.json() == data
    listed = await client.get(cards_url(world.org), headers=auth(world.admin))
    assert listed.json()["results"] == [data]

    history = await client.get(
        cards_url(world.org, f"{data['id']}/transactions/"), headers=auth(world.admin)
    )
    assert history.status_code == 200
    [opening] = history.json()["results"]
    assert opening["value"] == "13.37" and opening["acceptor"] == "acme"
    assert opening["order"] is None and opening["event"] is None


async def test_secret_is_generated_unambiguous_and_unique(client, world: World):
    seen = set()
    for _ in range(5):
        r = await client.post(
            cards_url(world.org), json={"currency": "EUR", "value": "5"}, headers=auth(world.admin)
        )
        assert r.status_code == 201, r.text
        secret = r.json()["secret"]
        assert len(secret) == SECRET_LENGTH and set(secret) <= set(SECRET_ALPHABET)
        assert r.json()["value"] == "5.00" and r.json()["testmode"] is False
        seen.add(secret)
    assert len(seen) == 5
    assert not set(SECRET_ALPHABET) & set("01OIL58BS2Z")


async def test_duplicate_secret_is_400_ignoring_case(client, world: World, factory):
    await card(factory, world.org, secret="ABCDEF")
    for secret in ("ABCDEF", "abcdef"):
        r = await client.post(
            cards_url(world.org),
            json={"secret": secret, "currency": "EUR", "value": "1.00"},
            headers=auth(world.admin),
        )
        assert_field_errors(r, "secret")
    # Another organizer's secrets do not matter, unless this organizer accepts its cards.
    await card(factory, world.other, secret="RIVAL1")
    body = {"secret": "RIVAL1", "currency": "EUR", "value": "1.00"}
    assert (
        await client.post(cards_url(world.org), json=body, headers=auth(world.admin))
    ).status_code == 201
    await card(factory, world.other, secret="RIVAL2")
    await accept(factory, world.other, world.org)
    body["secret"] = "RIVAL2"
    r = await client.post(cards_url(world.org), json=body, headers=auth(world.admin))
    assert_field_errors(r, "secret")


async def test_invalid_input_is_400(client, world: World):
    cases = [
        ({"value": "1.00"}, "currency"),
        ({"currency": "EUR"}, "value"),
        ({"currency": "EUR", "value": "-1.00"}, "value"),
        ({"currency": "EUR", "value": "1.001"}, "value"),
        ({"currency": "EUR", "value": "1e400"}, "value"),
        ({"currency": "EUR", "value": True}, "value"),
        ({"currency": "euro", "value": "1"}, "currency"),
        ({"currency": "EUR", "value": "1", "secret": "  "}, "secret"),
        ({"currency": "EUR", "value": "1", "secret": "x" * 191}, "secret"),
        ({"currency": "EUR", "value": "1", "secret": "a\tb"}, "secret"),
        ({"currency": "EUR", "value": "1", "expires": "tomorrow"}, "expires"),
        ({"currency": "EUR", "value": "1", "testmode": "maybe"}, "testmode"),
        ({"currency": "EUR", "value": "1", "owner_ticket": 999999}, "owner_ticket"),
        ({"currency": "EUR", "value": "1", "owner_ticket": True}, "owner_ticket"),
        ({"currency": "EUR", "value": "1", "owner_ticket": "nope"}, "owner_ticket"),
    ]
    for body, field in cases:
        r = await client.post(cards_url(world.org), json=body, headers=auth(world.admin))
        assert_field_errors(r, field)
    listed = await client.get(cards_url(world.org), headers=auth(world.admin))
    assert listed.json()["count"] == 0


async def test_patch_value_is_recorded_as_a_transaction(client, world: World, factory):
    gc = await card(factory, world.org, "50.00", secret="KEEP")
    url = cards_url(world.org, f"{gc.id}/")
    r = await client.patch(
        url,
        # secret, currency and testmode are not modifiable: ignored.
        json={"value": "80.00", "secret": "NEW", "currency": "USD", "testmode": True},
        headers=auth(world.admin),
    )
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["value"] == "80.00"
    assert (data["secret"], data["currency"], data["testmode"]) == ("KEEP", "EUR", False)
    assert await ledger(factory, gc.id) == (Decimal("80.00"), Decimal("80.00"), 2)

    r = await client.patch(url, json={"conditions": "Hi"}, headers=auth(world.admin))
    assert r.status_code == 200 and r.json()["value"] == "80.00"
    assert r.json()["conditions"] == "Hi"
    assert (await ledger(factory, gc.id))[2] == 2  # no value change, no transaction

    history = await client.get(f"{url}transactions/", headers=auth(world.admin))
    assert [t["value"] for t in history.json()["results"]] == ["50.00", "30.00"]


async def test_put_requires_value_and_keeps_the_rest(client, world: World, factory):
    gc = await card(factory, world.org, "10.00", conditions="Old", expires=in_days(30))
    url = cards_url(world.org, f"{gc.id}/")
    r = await client.put(url, json={"conditions": "New"}, headers=auth(world.admin))
    assert_field_errors(r, "value")
    r = await client.put(url, json={"value": "4.00"}, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    assert r.json()["conditions"] == "Old" and r.json()["expires"] is not None
    assert await ledger(factory, gc.id) == (Decimal("4.00"), Decimal("4.00"), 2)


async def test_owner_ticket_by_id_or_secret_and_expand(client, world: World, factory):
    order = await ticket(client, world, factory)
    position = order["positions"][0]
    body = {"currency": "EUR", "value": "1.00", "owner_ticket": position["secret"]}
    r = await client.post(cards_url(world.org), json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    assert r.json()["owner_ticket"] == position["id"]

    url = cards_url(world.org, f"{r.json()['id']}/")
    expanded = await client.get(f"{url}?expand=owner_ticket", headers=auth(world.admin))
    nested = expanded.json()["owner_ticket"]
    assert nested["id"] == position["id"] and nested["secret"] == position["secret"]
    assert nested["order"] == {"code": order["code"], "event": world.event.slug}
    listed = await client.get(
        cards_url(world.org, "?expand=owner_ticket"), headers=auth(world.admin)
    )
    assert listed.json()["results"][0]["owner_ticket"] == nested

    r = await client.patch(url, json={"owner_ticket": None}, headers=auth(world.admin))
    assert r.json()["owner_ticket"] is None
    r = await client.patch(url, json={"owner_ticket": position["id"]}, headers=auth(world.admin))
    assert r.json()["owner_ticket"] == position["id"]


async def test_owner_ticket_of_another_organizer_is_refused(client, world: World, factory):
    order = await ticket(client, world, factory)
    position_id = order["positions"][0]["id"]
    body = {"currency": "EUR", "value": "1.00", "owner_ticket": position_id}
    r = await client.post(cards_url(world.other), json=body, headers=auth(world.outsider))
    assert_field_errors(r, "owner_ticket")


async def test_delete_is_405_and_keeps_the_card(client, world: World, factory):
    gc = await card(factory, world.org)
    r = await client.delete(cards_url(world.org, f"{gc.id}/"), headers=auth(world.admin))
    assert r.status_code == 405
    assert r.json() == {"detail": "Gift cards cannot be deleted."}
    r = await client.get(cards_url(world.org, f"{gc.id}/"), headers=auth(world.admin))
    assert r.status_code == 200
    r = await client.delete(cards_url(world.org, "999999/"), headers=auth(world.admin))
    assert r.status_code == 404


async def test_filters_and_ordering(client, world: World, factory):
    old = await card(factory, world.org, "10.00", secret="OLDCARD", expires=in_days(-1))
    new = await card(factory, world.org, "20.00", secret="NEWCARD", expires=in_days(10))
    test = await card(factory, world.org, "10.00", secret="TESTCARD", testmode=True)

    async def ids(query: str) -> list[int]:
        r = await client.get(cards_url(world.org, query), headers=auth(world.admin))
        assert r.status_code == 200, r.text
        return [c["id"] for c in r.json()["results"]]

    assert await ids("?secret=newcard") == [new.id]
    assert await ids("?value=10") == [old.id, test.id]
    assert await ids("?value=10.00&testmode=true") == [test.id]
    assert await ids("?secret=") == [old.id, new.id, test.id]
    assert await ids("?expired=true") == [old.id]
    assert await ids("?expired=false") == [new.id, test.id]
    assert await ids("?testmode=false") == [old.id, new.id]
    assert await ids("?ordering=-value,id") == [new.id, old.id, test.id]
    # An unknown ordering is ignored, as the reference ignores it: the default order.
    assert await ids("?ordering=nope") == await ids("")
    bad_values = ("?value=ten", "?value=1e400", "?value=1.001", "?value=NaN")
    for bad in ("?expired=perhaps", "?include_accepted=x", *bad_values):
        r = await client.get(cards_url(world.org, bad), headers=auth(world.admin))
        assert r.status_code == 400, (bad, r.text)


async def test_other_tenants_cards_are_invisible(client, world: World, factory):
    theirs = await card(factory, world.other)
    headers = auth(world.admin)
    for url in (f"{theirs.id}/", f"{theirs.id}/transactions/"):
        assert (await client.get(cards_url(world.org, url), headers=headers)).status_code == 404
        url += "?include_accepted=true"
        assert (await client.get(cards_url(world.org, url), headers=headers)).status_code == 404
    r = await client.patch(cards_url(world.org, f"{theirs.id}/"), json={}, headers=headers)
    assert r.status_code == 404
    r = await client.get(cards_url(world.org, "?include_accepted=true"), headers=headers)
    assert r.json()["count"] == 0


async def test_read_permission_does_not_allow_writes(client, world: World, factory):
    gc = await card(factory, world.org)
    team = await factory.team(world.org, organizer_permissions=["organizer.giftcards:read"])
    reader = auth(await factory.token(team))
    assert (await client.get(cards_url(world.org), headers=reader)).status_code == 200
    assert (
        await client.get(cards_url(world.org, f"{gc.id}/transactions/"), headers=reader)
    ).status_code == 200
    body = {"currency": "EUR", "value": "1"}
    assert (await client.post(cards_url(world.org), json=body, headers=reader)).status_code == 403
    r = await client.post(
        cards_url(world.org, f"{gc.id}/transact/"), json={"value": "1"}, headers=reader
    )
    assert r.status_code == 403
    assert await ledger(factory, gc.id) == (Decimal("50.00"), Decimal("50.00"), 1)


async def test_list_queries_do_not_grow_with_the_page(client, world: World, factory, count_queries):
    order = await ticket(client, world, factory)
    owner = order["positions"][0]["id"]
    url = cards_url(world.org, "?expand=owner_ticket&include_accepted=true")
    await card(factory, world.org, owner_ticket_id=owner)
    await accept(factory, world.other, world.org)
    await card(factory, world.other)
    with count_queries() as few:
        r = await client.get(url, headers=auth(world.admin))
    assert r.json()["count"] == 2
    for _ in range(5):
        await card(factory, world.org, owner_ticket_id=owner)
        await card(factory, world.other)
    with count_queries() as many:
        r = await client.get(url, headers=auth(world.admin))
    assert r.json()["count"] == 12
    assert many.count == few.count, (few.statements, many.statements)
