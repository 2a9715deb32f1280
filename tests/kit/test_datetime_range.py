"""Every datetime the API accepts stays computable (issue 28: an event on 9999-12-31 in
``Pacific/Kiritimati`` was accepted, and its ticket download answered 500 with an
``OverflowError``). A property test sends edge datetimes through the whole way: create the
event, a product valid until then, a paid order, render its ticket, export the orders. A
value outside the supported years is a 400 naming the field; every other one works, with
no 5xx anywhere."""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from admit.kit.resources.schema import MAX_YEAR, MIN_YEAR, OUT_OF_RANGE
from tests.factories import World, auth
from tests.tickets import helpers as h

ZONES = ["Pacific/Kiritimati", "Etc/GMT+12", "UTC", "Asia/Kathmandu", "America/St_Johns"]
OFFSETS = [
    dt.timedelta(hours=14),
    dt.timedelta(hours=-12),
    dt.timedelta(0),
    dt.timedelta(hours=5, minutes=45),
]
EDGE_YEARS = [1, 1899, 1900, 1901, 2030, 8999, 9000, 9001, 9999]

_edge = st.builds(
    lambda year, month_end, hour, offset: dt.datetime(
        year, 12 if month_end else 1, 31 if month_end else 1, hour, 0, tzinfo=dt.timezone(offset)
    ),
    st.sampled_from(EDGE_YEARS),
    st.booleans(),
    st.sampled_from([0, 1, 12, 23]),
    st.sampled_from(OFFSETS),
)
_anywhere = st.datetimes(
    min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30), timezones=st.just(dt.UTC)
)
MOMENTS = st.one_of(_edge, _anywhere)
_slugs = itertools.count(1)


def _in_range(moment: dt.datetime) -> bool:
    try:
        utc = moment.astimezone(dt.UTC)
    except OverflowError:
        return False
    return MIN_YEAR <= utc.year <= MAX_YEAR


async def _walk(client, world: World, moment: dt.datetime, zone: str) -> None:
    app = client._transport.app
    headers = auth(world.admin)
    slug = f"edge{next(_slugs)}"
    base = f"/api/v1/organizers/{world.org.slug}/events/{slug}/"
    stamp = moment.isoformat()
    body = {
        "name": "Edge",
        "slug": slug,
        "date_from": stamp,
        "timezone": zone,
        "plugins": ["ticketoutputpdf"],
    }
    r = await client.post(
        f"/api/v1/organizers/{world.org.slug}/events/", json=body, headers=headers
    )
    if not _in_range(moment):
        assert r.status_code == 400, (stamp, r.text)
        assert r.json() == {"date_from": [OUT_OF_RANGE]}, r.text
        return
    assert r.status_code == 201, (stamp, r.text)
    item = {
        "name": "Ticket",
        "default_price": "10.00",
        "admission": True,
        "available_until": stamp,
    }
    r = await client.post(f"{base}items/", json=item, headers=headers)
    assert r.status_code == 201, (stamp, r.text)
    item_id = r.json()["id"]
    r = await client.post(
        f"{base}quotas/", json={"name": "Q", "size": 10, "items": [item_id]}, headers=headers
    )
    assert r.status_code == 201, r.text
    order = {
        "email": "edge@example.org",
        "status": "p",
        "payment_provider": "manual",
        "positions": [{"item": item_id, "attendee_name": "Ada", "valid_until": stamp}],
    }
    r = await client.post(f"{base}orders/", json=order, headers=headers)
    assert r.status_code == 201, (stamp, r.text)
    position = r.json()["positions"][0]["id"]
    link = f"{base}orderpositions/{position}/download/pdf/"
    first = await client.get(link, headers=headers)
    assert first.status_code == 409, (stamp, first.text)
    await h.run_waiting(app)
    ready = await client.get(link, headers=headers)
    assert ready.status_code == 200, (stamp, ready.status_code, ready.text[:300])
    r = await client.post(
        f"{base}exporters/orderlist/run/", json={"_format": "xlsx"}, headers=headers
    )
    assert r.status_code == 202, r.text
    download = r.json()["download"]
    await h.run_waiting(app)
    r = await client.get(download, headers=headers)
    assert r.status_code == 200, (stamp, r.status_code, r.text[:300])
    jobs = await h.jobs(app)
    assert all(job.status == "finished" for job in jobs), [(j.kind, j.message) for j in jobs]


async def test_edge_datetimes_go_all_the_way_or_are_400(client, world: World):
    loop = asyncio.get_running_loop()

    @settings(
        max_examples=25,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(moment=MOMENTS, zone=st.sampled_from(ZONES))
    @example(moment=dt.datetime(9999, 12, 31, 20, tzinfo=dt.UTC), zone="Pacific/Kiritimati")
    @example(moment=dt.datetime(1, 1, 1, 13, tzinfo=dt.UTC), zone="Etc/GMT+12")
    @example(moment=dt.datetime(9000, 12, 31, 23, tzinfo=dt.UTC), zone="Pacific/Kiritimati")
    def walk(moment: dt.datetime, zone: str) -> None:
        # The app lives on the test's loop; hypothesis drives it from this thread.
        asyncio.run_coroutine_threadsafe(_walk(client, world, moment, zone), loop).result()

    await asyncio.to_thread(walk)


async def test_the_reported_event_is_refused(client, world: World):
    """The case from the issue, and its neighbours on the bound."""
    for stamp, ok in [
        ("9999-12-31T00:00:00Z", False),
        ("9000-12-31T23:59:59Z", True),
        ("9001-01-01T00:00:00+14:00", True),  # 9000-12-31 10:00 in UTC
        ("1899-12-31T23:59:59Z", False),
        ("1900-01-01T00:00:00-12:00", True),
    ]:
        slug = f"edge{next(_slugs)}"
        body = {"name": "E", "slug": slug, "date_from": stamp, "timezone": "Pacific/Kiritimati"}
        r = await client.post(
            f"/api/v1/organizers/{world.org.slug}/events/", json=body, headers=auth(world.admin)
        )
        assert r.status_code == (201 if ok else 400), (stamp, r.text)
    r = await client.patch(
        f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/",
        json={"presale_end": "9999-12-31T00:00:00Z"},
        headers=auth(world.admin),
    )
    assert r.status_code == 400 and r.json() == {"presale_end": [OUT_OF_RANGE]}
