"""The event detail skips the schema on its hot path; it must render exactly as the schema."""

from __future__ import annotations

import datetime as dt

from admit.events.schemas import EventDetailOut
from admit.events.service import event_to_read
from tests.factories import World, auth


async def test_detail_equals_schema_rendering(client, world: World, factory):
    event = await factory.event(
        world.org,
        "full",
        date_to=dt.datetime(2030, 5, 2, 18, 30, 15, 123456, tzinfo=dt.UTC),
        location={"en": "Hall"},
        geo_lat=52.5,
        meta_data={},
        plugins=["sendmail"],
        timezone="Europe/Berlin",
    )
    r = await client.get("/api/v1/organizers/acme/events/full/", headers=auth(world.admin))
    assert r.status_code == 200
    expected = EventDetailOut.model_validate(
        event_to_read(event, "http://testserver", "acme")
    ).model_dump(mode="json")
    assert r.json() == expected
    assert r.json()["date_to"] == "2030-05-02T18:30:15.123456Z"
    assert r.json()["date_from"].endswith("Z")
