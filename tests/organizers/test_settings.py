"""``O/settings/``: the organizer's settings (customer accounts, contact, imprint)."""

from __future__ import annotations

from tests.factories import World, auth

URL = "/api/v1/organizers/acme/settings/"


async def test_defaults_then_a_change_then_a_reset(client, world: World):
    r = await client.get(URL, headers=auth(world.admin))
    assert r.status_code == 200
    assert r.json() == {
        "customer_accounts": False,
        "customer_accounts_native": True,
        "customer_accounts_link_by_email": False,
        "contact_mail": None,
        "imprint_url": None,
    }
    r = await client.patch(
        URL,
        headers=auth(world.admin),
        json={"customer_accounts": True, "contact_mail": "hi@acme.example", "unknown": 1},
    )
    assert r.status_code == 200, r.text
    assert r.json()["customer_accounts"] is True
    assert r.json()["contact_mail"] == "hi@acme.example"
    assert (await client.get(URL, headers=auth(world.admin))).json()["customer_accounts"] is True
    r = await client.patch(URL, headers=auth(world.admin), json={"contact_mail": None})
    assert r.json()["contact_mail"] is None and r.json()["customer_accounts"] is True
    explained = (await client.get(URL + "?explain", headers=auth(world.admin))).json()
    assert explained["customer_accounts"]["value"] is True
    assert explained["customer_accounts"]["label"]


async def test_bad_values_name_their_key_and_change_nothing(client, world: World):
    r = await client.patch(
        URL,
        headers=auth(world.admin),
        json={"customer_accounts": "maybe", "imprint_url": "javascript:alert(1)"},
    )
    assert r.status_code == 400
    assert set(r.json()) == {"customer_accounts", "imprint_url"}
    assert (await client.get(URL, headers=auth(world.admin))).json()["customer_accounts"] is False
    r = await client.patch(URL, headers=auth(world.admin), content=b"[1]")
    assert r.status_code == 400


async def test_only_the_organizers_settings_writers(client, world: World):
    assert (await client.get(URL, headers=auth(world.nobody))).status_code == 403
    r = await client.patch(URL, headers=auth(world.nobody), json={"customer_accounts": True})
    assert r.status_code == 403
    assert (await client.get(URL, headers=auth(world.outsider))).status_code in (403, 404)
    assert (await client.get(URL)).status_code == 401
