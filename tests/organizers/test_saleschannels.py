"""``O/saleschannels/``: the channels Admit sells through, in the reference's shape."""

from __future__ import annotations

from admit.events.plugins import SALES_CHANNELS
from admit.organizers.saleschannels import LABELS
from tests.devices.helpers import device_auth, make_device
from tests.factories import World, auth

URL = "/api/v1/organizers/acme/saleschannels/"


async def test_list_has_every_channel_in_order(client, world: World):
    response = await client.get(URL, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["count"] == len(SALES_CHANNELS)
    assert body["next"] is None and body["previous"] is None
    assert [c["identifier"] for c in body["results"]] == list(SALES_CHANNELS)
    web = body["results"][0]
    assert web == {
        "identifier": "web",
        "label": {"en": "Online shop"},
        "type": "web",
        "position": 0,
    }
    for position, channel in enumerate(body["results"]):
        assert set(channel) == {"identifier", "label", "type", "position"}
        assert channel["position"] == position
        assert channel["type"] == channel["identifier"]
        assert channel["label"]["en"]


def test_every_channel_has_a_label():
    assert set(LABELS) == set(SALES_CHANNELS)


async def test_detail(client, world: World):
    response = await client.get(f"{URL}box_office/", headers=auth(world.admin))
    assert response.status_code == 200
    assert response.json() == {
        "identifier": "box_office",
        "label": {"en": "Box office"},
        "type": "box_office",
        "position": SALES_CHANNELS.index("box_office"),
    }
    response = await client.get(f"{URL}nope/", headers=auth(world.admin))
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


async def test_paginated(client, world: World):
    response = await client.get(URL, params={"page_size": 2}, headers=auth(world.admin))
    body = response.json()
    assert len(body["results"]) == 2 and body["count"] == len(SALES_CHANNELS)
    assert body["next"] == "http://testserver" + URL + "?page_size=2&page=2"
    second = (await client.get(body["next"], headers=auth(world.admin))).json()
    assert [c["identifier"] for c in second["results"]] == list(SALES_CHANNELS[2:4])
    response = await client.get(URL, params={"page": 9}, headers=auth(world.admin))
    assert response.status_code == 404
    assert response.json() == {"detail": "Invalid page."}


async def test_access(client, world: World, factory):
    # Any member of the organizer may read them, even one without permissions; others may not.
    assert (await client.get(URL, headers=auth(world.nobody))).status_code == 200
    assert (await client.get(URL, headers=auth(world.outsider))).status_code == 403
    assert (await client.get(URL)).status_code == 401
    other = "/api/v1/organizers/rival/saleschannels/"
    assert (await client.get(other, headers=auth(world.outsider))).status_code == 200
    _, token = await make_device(factory, world.org)
    assert (await client.get(URL, headers=device_auth(token))).status_code == 200
