"""``items/{item}/program_times/``: an item's program times one by one, over the same slots as
the item's ``program_times`` field (ids kept in the list, stable across writes of either)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.catalog_items.helpers import OTHER, item, url
from tests.factories import World, auth

A = {"start": "2030-05-01T09:00:00Z", "end": "2030-05-01T11:30:00Z"}
B = {"start": "2030-05-02T09:00:00Z", "end": "2030-05-02T10:00:00Z"}
C = {"start": "2030-05-03T09:00:00Z", "end": "2030-05-03T10:00:00Z"}


def times(item_id: int, slot: int | None = None) -> str:
    return url(f"items/{item_id}/program_times/" + (f"{slot}/" if slot else ""))


async def field(client, world: World, item_id: int) -> list[dict[str, Any]]:
    got = await client.get(url(f"items/{item_id}/"), headers=auth(world.admin))
    listed = await client.get(url("items/"), headers=auth(world.admin))
    [row] = [i for i in listed.json()["results"] if i["id"] == item_id]
    assert row["program_times"] == got.json()["program_times"]
    return got.json()["program_times"]


async def listed(client, world: World, item_id: int) -> list[dict[str, Any]]:
    body = (await client.get(times(item_id), headers=auth(world.admin))).json()
    assert body["count"] == len(body["results"]) and body["next"] is None
    return body["results"]


async def test_crud_round_trip_agrees_with_the_item_field(client, world: World, factory):
    thing = await item(factory, world.event)
    admin = auth(world.admin)
    assert await listed(client, world, thing.id) == []
    first = await client.post(times(thing.id), json=A, headers=admin)
    assert first.status_code == 201, first.text
    assert set(first.json()) == {"id", "start", "end"}
    # An offset is kept as the same moment, shown in UTC.
    second = await client.post(
        times(thing.id),
        json={"start": "2030-05-02T11:00:00+02:00", "end": "2030-05-02T12:00:00+02:00"},
        headers=admin,
    )
    assert second.json() == {"id": second.json()["id"], **B}
    a, b = first.json()["id"], second.json()["id"]
    assert a != b
    assert await listed(client, world, thing.id) == [{"id": a, **A}, {"id": b, **B}]
    assert await field(client, world, thing.id) == [A, B]
    got = await client.get(times(thing.id, b), headers=admin)
    assert got.status_code == 200 and got.json() == {"id": b, **B}

    patched = await client.patch(times(thing.id, a), json={"end": C["end"]}, headers=admin)
    assert patched.json() == {"id": a, "start": A["start"], "end": C["end"]}
    put = await client.put(times(thing.id, b), json=C, headers=admin)
    assert put.json() == {"id": b, **C}
    assert await field(client, world, thing.id) == [{"start": A["start"], "end": C["end"]}, C]

    assert (await client.delete(times(thing.id, a), headers=admin)).status_code == 204
    assert (await client.get(times(thing.id, a), headers=admin)).status_code == 404
    assert await listed(client, world, thing.id) == [{"id": b, **C}]
    assert await field(client, world, thing.id) == [C]


async def test_ids_survive_writes_of_the_item(client, world: World, factory):
    thing = await item(factory, world.event)
    admin = auth(world.admin)
    a = (await client.post(times(thing.id), json=A, headers=admin)).json()["id"]
    b = (await client.post(times(thing.id), json=B, headers=admin)).json()["id"]
    # An unrelated change of the item, and the item written back as read.
    r = await client.patch(url(f"items/{thing.id}/"), json={"position": 4}, headers=admin)
    assert r.status_code == 200 and r.json()["program_times"] == [A, B]
    read = (await client.get(url(f"items/{thing.id}/"), headers=admin)).json()
    r = await client.put(url(f"items/{thing.id}/"), json=read, headers=admin)
    assert r.status_code == 200, r.text
    assert await listed(client, world, thing.id) == [{"id": a, **A}, {"id": b, **B}]
    # The field replaces the list: a slot sent again keeps its id, a new one gets a new id.
    r = await client.patch(url(f"items/{thing.id}/"), json={"program_times": [C, B]}, headers=admin)
    assert r.json()["program_times"] == [C, B]
    slots = await listed(client, world, thing.id)
    assert {"id": b, **B} in slots and len(slots) == 2
    [new] = [s for s in slots if s["id"] != b]
    assert new == {"id": new["id"], **C} and new["id"] not in (a, b)
    assert (await client.get(times(thing.id, a), headers=admin)).status_code == 404


async def test_slots_stored_without_ids_get_stable_ones(client, world: World, factory):
    thing = await item(factory, world.event, program_times=[A, B])
    admin = auth(world.admin)
    before = await listed(client, world, thing.id)
    assert [s["id"] for s in before] == [1, 2]
    assert await listed(client, world, thing.id) == before
    # A write here keeps them and gives the new slot the next id.
    r = await client.post(times(thing.id), json=C, headers=admin)
    assert r.json()["id"] == 3
    assert await listed(client, world, thing.id) == [*before, {"id": 3, **C}]
    assert await field(client, world, thing.id) == [A, B, C]


@pytest.mark.parametrize(
    "body",
    [
        {"start": A["start"]},
        {"end": A["end"]},
        {"start": A["end"], "end": A["start"]},
        {"start": A["start"], "end": A["start"]},
        {"start": "soon", "end": A["end"]},
        {"start": 5, "end": A["end"]},
        {"start": None, "end": A["end"]},
        {"start": [A["start"]], "end": A["end"]},
    ],
)
async def test_bad_bodies_are_400_naming_the_field(client, world: World, factory, body):
    thing = await item(factory, world.event)
    admin = auth(world.admin)
    r = await client.post(times(thing.id), json=body, headers=admin)
    assert r.status_code == 400, r.text
    assert set(r.json()) <= {"start", "end"} and r.json()
    slot = (await client.post(times(thing.id), json=B, headers=admin)).json()["id"]
    r = await client.put(times(thing.id, slot), json=body, headers=admin)
    assert r.status_code == 400 and set(r.json()) <= {"start", "end"}, r.text
    assert await listed(client, world, thing.id) == [{"id": slot, **B}]


async def test_bad_documents_and_addresses(client, world: World, factory):
    thing = await item(factory, world.event)
    admin = auth(world.admin)
    slot = (await client.post(times(thing.id), json=A, headers=admin)).json()["id"]
    for raw in ("[]", "5", "not json", '{"start": '):
        r = await client.post(
            times(thing.id), content=raw, headers={**admin, "Content-Type": "application/json"}
        )
        assert r.status_code == 400 and isinstance(r.json(), dict), raw
    early = {"end": "2000-01-01T00:00:00Z"}
    r = await client.patch(times(thing.id, slot), json=early, headers=admin)
    assert r.status_code == 400 and list(r.json()) == ["end"]
    for path in (
        times(thing.id, slot + 1),
        url(f"items/{thing.id}/program_times/x/"),
        url(f"items/{thing.id}/program_times/99999999999/"),
        url(f"items/{thing.id + 1000}/program_times/"),
        times(thing.id) + "?page=2",
    ):
        assert (await client.get(path, headers=admin)).status_code == 404, path
    assert (await client.delete(times(thing.id, slot + 1), headers=admin)).status_code == 404
    # Another event's item is as unknown as a missing one.
    foreign = await item(factory, world.other_event)
    r = await client.get(f"{OTHER}/items/{foreign.id}/program_times/", headers=admin)
    assert r.status_code in (403, 404)
    r = await client.post(times(foreign.id), json=A, headers=admin)
    assert r.status_code == 404


async def test_concurrent_creates_get_distinct_ids_and_lose_none(
    client, world: World, factory, database_url: str
):
    """Twelve creates at once on one item: the item row lock serialises them, so each gets
    its own id and every slot is kept (without it two would read the same list and one
    write would overwrite the other). PostgreSQL only: SQLite serialises writers anyway."""
    if not database_url.startswith("postgresql"):
        pytest.skip("concurrent writers only overlap on PostgreSQL (SQLite serialises them)")
    import asyncio

    thing = await item(factory, world.event)
    bodies = [
        {"start": f"2030-06-{day:02d}T09:00:00Z", "end": f"2030-06-{day:02d}T10:00:00Z"}
        for day in range(1, 13)
    ]
    answers = await asyncio.gather(
        *(client.post(times(thing.id), json=b, headers=auth(world.admin)) for b in bodies)
    )
    assert [a.status_code for a in answers] == [201] * 12, [a.text for a in answers]
    ids = {a.json()["id"] for a in answers}
    assert len(ids) == 12
    kept = await listed(client, world, thing.id)
    assert {s["id"] for s in kept} == ids and len(await field(client, world, thing.id)) == 12
