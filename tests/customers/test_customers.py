"""``O/customers/``: generated identifiers, unique e-mail, filters, PATCH/PUT, anonymize."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from sqlalchemy import select

from admit.auth.credentials import verify_password
from admit.models import Customer, OutgoingMail
from tests.factories import World, assert_field_errors, auth

CUSTOMERS = "/api/v1/organizers/acme/customers/"
FIELDS = {
    "identifier",
    "external_identifier",
    "email",
    "phone",
    "name",
    "name_parts",
    "is_active",
    "is_verified",
    "last_login",
    "date_joined",
    "locale",
    "last_modified",
    "notes",
}


async def create(client: Any, token: str, **fields: Any) -> dict:
    response = await client.post(CUSTOMERS, json=fields, headers=auth(token))
    assert response.status_code == 201, response.text
    return response.json()


async def test_create_generates_identifier_and_name(client, world: World, factory):
    body = await create(
        client,
        world.admin,
        email="test@example.org",
        phone="+49 30 1234567",
        name_parts={"_scheme": "given_family", "given_name": "John", "family_name": "Doe"},
        password="verysecret",
    )
    assert set(body) == FIELDS
    assert re.fullmatch(r"[A-Z2-9]{7}", body["identifier"])
    assert body["name"] == "John Doe"
    assert body["is_active"] is True and body["is_verified"] is True
    assert body["locale"] == "en" and body["notes"] is None and body["last_login"] is None
    assert "password" not in body
    async with factory.sessionmaker() as session:
        row = (
            await session.execute(select(Customer).where(Customer.identifier == body["identifier"]))
        ).scalar_one()
        assert verify_password(row.password_hash, "verysecret")


async def test_create_validates(client, world: World):
    for fields, field in (
        ({"email": "not-an-address"}, "email"),
        ({"phone": "call me"}, "phone"),
        ({"password": "short"}, "password"),
        ({"locale": ""}, "locale"),
        ({"is_active": "perhaps"}, "is_active"),
    ):
        response = await client.post(CUSTOMERS, json=fields, headers=auth(world.admin))
        assert_field_errors(response, field)
    nested = await client.post(
        CUSTOMERS, json={"name_parts": {"given_name": 3}}, headers=auth(world.admin)
    )
    assert nested.status_code == 400
    assert nested.json() == {"name_parts": {"given_name": ["Not a valid string."]}}


async def test_email_is_unique_per_organizer_ignoring_case(client, world: World):
    await create(client, world.admin, email="a@example.org")
    response = await client.post(
        CUSTOMERS, json={"email": "A@example.org"}, headers=auth(world.admin)
    )
    assert_field_errors(response, "email")
    # Another organizer may have a customer with the same address.
    other = await client.post(
        "/api/v1/organizers/rival/customers/",
        json={"email": "a@example.org"},
        headers=auth(world.outsider),
    )
    assert other.status_code == 201


async def test_concurrent_creates_with_one_email_make_one_customer(client, world: World, factory):
    responses = await asyncio.gather(
        *(
            client.post(CUSTOMERS, json={"email": "rush@example.org"}, headers=auth(world.admin))
            for _ in range(6)
        )
    )
    assert sorted(r.status_code for r in responses) == [201] + [400] * 5
    async with factory.sessionmaker() as session:
        rows = (await session.execute(select(Customer.id))).all()
        assert len(rows) == 1


async def test_send_email_queues_a_message(client, world: World, factory):
    body = await create(client, world.admin, email="new@example.org", send_email=True)
    await create(client, world.admin, email="quiet@example.org")
    async with factory.sessionmaker() as session:
        mails = (await session.execute(select(OutgoingMail))).scalars().all()
    assert [m.to for m in mails] == [["new@example.org"]]
    assert body["identifier"] in mails[0].body


async def test_list_filters_and_tenancy(client, world: World):
    first = await create(client, world.admin, email="first@example.org", external_identifier="x1")
    await create(client, world.admin, email="second@example.org", is_active=False)
    await client.post(
        "/api/v1/organizers/rival/customers/",
        json={"email": "first@example.org"},
        headers=auth(world.outsider),
    )
    listed = (await client.get(CUSTOMERS, headers=auth(world.admin))).json()
    assert listed["count"] == 2
    for query, emails in (
        ("email=FIRST@example.org", ["first@example.org"]),
        (f"identifier={first['identifier']}", ["first@example.org"]),
        ("external_identifier=x1", ["first@example.org"]),
        ("is_active=false", ["second@example.org"]),
        ("ordering=-email", ["second@example.org", "first@example.org"]),
    ):
        body = (await client.get(f"{CUSTOMERS}?{query}", headers=auth(world.admin))).json()
        assert [c["email"] for c in body["results"]] == emails, query
    bad = await client.get(f"{CUSTOMERS}?is_active=perhaps", headers=auth(world.admin))
    assert_field_errors(bad, "is_active")
    detail = await client.get(f"{CUSTOMERS}{first['identifier']}/", headers=auth(world.admin))
    assert detail.json() == first
    assert (await client.get(f"{CUSTOMERS}NOPE/", headers=auth(world.admin))).status_code == 404


async def test_patch_and_put(client, world: World):
    body = await create(
        client, world.admin, email="p@example.org", notes="VIP", name_parts={"full_name": "Ann"}
    )
    url = f"{CUSTOMERS}{body['identifier']}/"
    patched = await client.patch(
        url,
        json={"email": "q@example.org", "identifier": "HACKED", "name": "ignored"},
        headers=auth(world.admin),
    )
    assert patched.status_code == 200
    assert patched.json()["email"] == "q@example.org"
    assert patched.json()["identifier"] == body["identifier"]
    assert patched.json()["notes"] == "VIP" and patched.json()["name"] == "Ann"
    put = await client.put(url, json={"email": "q@example.org"}, headers=auth(world.admin))
    assert put.json()["notes"] == "VIP" and put.json()["name_parts"] == {"full_name": "Ann"}
    other = await create(client, world.admin, email="taken@example.org")
    clash = await client.patch(url, json={"email": "TAKEN@example.org"}, headers=auth(world.admin))
    assert_field_errors(clash, "email")
    assert other["identifier"] != body["identifier"]


async def test_customers_are_not_deleted(client, world: World):
    body = await create(client, world.admin)
    response = await client.delete(f"{CUSTOMERS}{body['identifier']}/", headers=auth(world.admin))
    assert response.status_code == 405


async def test_anonymize_removes_personal_data(client, world: World):
    body = await create(
        client,
        world.admin,
        email="gone@example.org",
        phone="+4930123456",
        name_parts={"full_name": "Gone Person"},
        external_identifier="ext",
        notes="note",
    )
    membership_type = await client.post(
        "/api/v1/organizers/acme/membershiptypes/", json={"name": "Pass"}, headers=auth(world.admin)
    )
    membership = await client.post(
        "/api/v1/organizers/acme/memberships/",
        json={
            "customer": body["identifier"],
            "membership_type": membership_type.json()["id"],
            "date_start": "2030-01-01T00:00:00Z",
            "date_end": "2030-12-31T00:00:00Z",
            "attendee_name_parts": {"full_name": "Gone Person"},
        },
        headers=auth(world.admin),
    )
    response = await client.post(
        f"{CUSTOMERS}{body['identifier']}/anonymize/", headers=auth(world.admin)
    )
    assert response.status_code == 200
    anon = response.json()
    assert anon["identifier"] == body["identifier"]
    for field in ("email", "phone", "name", "external_identifier", "notes"):
        assert anon[field] is None, field
    assert anon["name_parts"] == {} and anon["is_active"] is False
    kept = await client.get(
        f"/api/v1/organizers/acme/memberships/{membership.json()['id']}/", headers=auth(world.admin)
    )
    assert kept.json()["attendee_name_parts"] == {}
    # The address is free again.
    await create(client, world.admin, email="gone@example.org")
    missing = await client.post(f"{CUSTOMERS}NOPE/anonymize/", headers=auth(world.admin))
    assert missing.status_code == 404


async def test_permissions(client, world: World, factory):
    reader = await factory.token(
        await factory.team(world.org, organizer_permissions=["organizer.customers:read"])
    )
    assert (await client.get(CUSTOMERS, headers=auth(reader))).status_code == 200
    assert (await client.post(CUSTOMERS, json={}, headers=auth(reader))).status_code == 403
    body = await create(client, world.admin)
    anonymize = await client.post(
        f"{CUSTOMERS}{body['identifier']}/anonymize/", headers=auth(reader)
    )
    assert anonymize.status_code == 403
