"""``GET /api/v1/device/eventselection``: a scanner asks which event, series date and check-in
list it should work on now; 304 keeps its selection, 404 when nothing is selectable."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import insert

from admit.models import CheckinList, Event, Gate, SubEvent, checkin_list_gates
from tests.devices.helpers import device_auth, make_device
from tests.factories import Factory, World, auth

URL = "/api/v1/device/eventselection"
H = dt.timedelta(hours=1)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def _zone_at(now: dt.datetime, local_hour: int) -> str:
    """A fixed-offset time zone in which ``now`` is ``local_hour`` o'clock."""
    ahead = (local_hour - now.hour) % 24
    if ahead > 12:
        ahead -= 24
    return f"Etc/GMT-{ahead}" if ahead >= 0 else f"Etc/GMT+{-ahead}"


async def _event(factory: Factory, world: World, slug: str, start: dt.datetime, **kw: Any) -> Event:
    kw.setdefault("live", True)
    kw.setdefault("date_to", start + 3 * H)
    return await factory.event(world.org, slug, date_from=start, **kw)


async def _subevent(factory: Factory, event: Event, start: dt.datetime, **kw: Any) -> SubEvent:
    kw.setdefault("active", True)
    kw.setdefault("date_to", start + 3 * H)
    obj = SubEvent(event_id=event.id, name={"en": "Date"}, date_from=start, **kw)
    return await factory._add(obj)  # type: ignore[return-value]


async def _list(
    factory: Factory, event: Event, name: str, *, subevent: SubEvent | None = None, gate=None
) -> CheckinList:
    obj = CheckinList(event_id=event.id, name=name, subevent_id=subevent.id if subevent else None)
    await factory._add(obj)
    if gate is not None:
        async with factory.sessionmaker() as session:
            await session.execute(
                insert(checkin_list_gates).values(list_id=obj.id, gate_id=gate.id)
            )
            await session.commit()
    return obj  # type: ignore[return-value]


async def _get(client, token: str, **params: Any):
    return await client.get(URL, params=params, headers=device_auth(token))


def _answer(event: Event, subevent: SubEvent | None, checkin_list: CheckinList | None) -> dict:
    return {
        "event": {"slug": event.slug, "name": event.name["en"]},
        "subevent": subevent.id if subevent else None,
        "checkinlist": checkin_list.id if checkin_list else None,
    }


async def test_no_live_event_is_404(client, world: World, factory):
    # world.event is not live; a live event of another organizer does not count.
    await factory.event(world.other, "theirs", live=True, date_from=_now())
    _, token = await make_device(factory, world.org)
    response = await _get(client, token)
    assert response.status_code == 404
    assert response.json() == {"detail": "No event is available for this device right now."}


async def test_running_event_is_suggested_with_its_first_list(client, world: World, factory):
    event = await _event(factory, world, "tonight", _now() - H)
    second = await _list(factory, event, "VIP")
    first = await _list(factory, event, "Entrance")
    _, token = await make_device(factory, world.org)
    response = await _get(client, token)
    assert response.status_code == 200, response.text
    assert response.json() == _answer(event, None, first)
    assert second.id != first.id


async def test_current_selection_kept_is_304(client, world: World, factory):
    event = await _event(factory, world, "tonight", _now() - H)
    checkin_list = await _list(factory, event, "Entrance")
    _, token = await make_device(factory, world.org)
    response = await _get(
        client, token, current_event="tonight", current_checkinlist=checkin_list.id
    )
    assert response.status_code == 304
    assert response.content == b""


async def test_the_current_list_is_kept_when_it_belongs_to_the_suggestion(
    client, world: World, factory
):
    event = await _event(factory, world, "tonight", _now() - H)
    await _list(factory, event, "A first")
    vip = await _list(factory, event, "VIP")
    _, token = await make_device(factory, world.org)
    response = await _get(client, token, current_event="tonight", current_checkinlist=vip.id)
    assert response.status_code == 304


async def test_switch_to_the_next_date_keeps_a_list_of_the_same_name(client, world: World, factory):
    now = _now()
    old = await _event(factory, world, "yesterday", now - 30 * H, date_to=now - 26 * H)
    new = await _event(factory, world, "today", now + H)
    old_vip = await _list(factory, old, "VIP")
    await _list(factory, old, "Entrance")
    await _list(factory, new, "Entrance")
    new_vip = await _list(factory, new, "VIP")
    _, token = await make_device(factory, world.org)
    response = await _get(client, token, current_event="yesterday", current_checkinlist=old_vip.id)
    assert response.status_code == 200, response.text
    assert response.json() == _answer(new, None, new_vip)


async def test_running_date_of_a_series_wins_over_a_finished_selection(
    client, world: World, factory
):
    now = _now()
    single = await _event(factory, world, "past", now - 50 * H, date_to=now - 47 * H)
    series = await _event(factory, world, "tour", now - 100 * H, has_subevents=True)
    await _subevent(factory, series, now - 26 * H)
    running = await _subevent(factory, series, now - H)
    await _subevent(factory, series, now + 20 * H)
    await _subevent(factory, series, now - 2 * H, active=False, date_to=now + 5 * H)
    series_list = await _list(factory, series, "All dates")
    other_date = await _list(factory, series, "Another date", subevent=running)
    _, token = await make_device(factory, world.org)
    response = await _get(client, token, current_event=single.slug)
    assert response.status_code == 200
    # Lists for every date and for this date both qualify; the first by name is taken.
    assert response.json() == _answer(series, running, series_list)
    assert other_date.name > series_list.name


async def test_admission_counts_as_the_start(client, world: World, factory):
    now = _now()
    doors_open = await _event(
        factory, world, "doors", now + H, date_admission=now - dt.timedelta(minutes=5)
    )
    _, token = await make_device(factory, world.org)
    response = await _get(client, token)
    assert response.status_code == 200
    assert response.json() == _answer(doors_open, None, None)


async def test_next_event_when_none_has_started(client, world: World, factory):
    now = _now()
    later = await _event(factory, world, "later", now + 48 * H)
    sooner = await _event(factory, world, "sooner", now + 24 * H)
    _, token = await make_device(factory, world.org)
    response = await _get(client, token)
    assert response.json() == _answer(sooner, None, None)
    assert later.slug == "later"


async def test_last_event_when_none_is_upcoming(client, world: World, factory):
    now = _now()
    await _event(factory, world, "older", now - 72 * H)
    last = await _event(factory, world, "last", now - 48 * H)
    _, token = await make_device(factory, world.org)
    assert (await _get(client, token)).json() == _answer(last, None, None)
    # Already selected: the answer would be the same, so 304.
    response = await _get(client, token, current_event="last")
    assert response.status_code == 304


async def test_between_two_dates_the_nearer_one_by_the_midpoint(client, world: World, factory):
    """An ended date and the next one: before half the gap the ended one stays, after it the
    next one is chosen (two series dates far from midnight in their own time zone)."""
    now = _now()
    series = await _event(factory, world, "tour", now - 100 * H, has_subevents=True)
    tz = _zone_at(now, 12)  # both dates are today there
    async with factory.sessionmaker() as session:
        obj = await session.get(Event, series.id)
        obj.timezone = tz
        await session.commit()
    ended = await _subevent(factory, series, now - 4 * H, date_to=now - 3 * H)
    nxt = await _subevent(factory, series, now + 5 * H)  # midpoint at now + 1h: ended wins
    _, token = await make_device(factory, world.org)
    assert (await _get(client, token)).json() == _answer(series, ended, None)
    async with factory.sessionmaker() as session:
        obj = await session.get(SubEvent, nxt.id)
        obj.date_from = now + H  # midpoint now - 1h: the next one wins
        await session.commit()
    assert (await _get(client, token)).json() == _answer(series, nxt, None)


async def test_a_date_today_wins_over_one_on_another_day(client, world: World, factory):
    """Where the midpoint rule alone would choose the other one."""
    now = _now()
    tz = _zone_at(now, 20)
    # Today 01:00-02:00 local, the next one tomorrow 01:00: the midpoint has passed.
    today = await _event(factory, world, "early", now - 19 * H, date_to=now - 18 * H, timezone=tz)
    await _event(factory, world, "tomorrow", now + 5 * H, timezone=tz)
    _, token = await make_device(factory, world.org)
    assert (await _get(client, token)).json() == _answer(today, None, None)


async def test_a_date_later_today_wins_over_yesterdays(client, world: World, factory):
    now = _now()
    tz = _zone_at(now, 4)
    # Yesterday 23:00-23:30 local, the next one today 23:00: the midpoint is still ahead.
    await _event(factory, world, "late", now - 5 * H, date_to=now - 4.5 * H, timezone=tz)
    tonight = await _event(factory, world, "tonight", now + 19 * H, timezone=tz)
    _, token = await make_device(factory, world.org)
    assert (await _get(client, token)).json() == _answer(tonight, None, None)


async def test_device_limits_and_gates(client, world: World, factory):
    now = _now()
    a = await _event(factory, world, "hall-a", now - H)
    b = await _event(factory, world, "hall-b", now - 2 * H)
    async with factory.sessionmaker() as session:
        gate = Gate(organizer_id=world.org.id, name="North")
        session.add(gate)
        await session.commit()
    await _list(factory, a, "A")
    b_list = await _list(factory, b, "North door", gate=gate)
    await _list(factory, b, "Another door")

    _, limited = await make_device(factory, world.org, all_events=False, events=[b])
    assert (await _get(client, limited)).json() == _answer(b, None, await _first(factory, b))
    _, at_gate = await make_device(factory, world.org, gate_id=gate.id)
    # Only hall-b has a list for the gate, and only that list is offered.
    assert (await _get(client, at_gate)).json() == _answer(b, None, b_list)
    _, everywhere = await make_device(factory, world.org)
    assert (await _get(client, everywhere)).json()["event"]["slug"] == "hall-a"


async def _first(factory: Factory, event: Event) -> CheckinList:
    from sqlalchemy import select

    async with factory.sessionmaker() as session:
        return (
            await session.execute(
                select(CheckinList)
                .where(CheckinList.event_id == event.id)
                .order_by(CheckinList.name, CheckinList.id)
                .limit(1)
            )
        ).scalar_one()


async def test_unknown_current_values_are_ignored(client, world: World, factory):
    event = await _event(factory, world, "tonight", _now() - H)
    _, token = await make_device(factory, world.org)
    response = await _get(
        client, token, current_event="nope", current_subevent=99999, current_checkinlist=99999
    )
    assert response.status_code == 200
    assert response.json() == _answer(event, None, None)


async def test_junk_ids_are_400(client, world: World, factory):
    _, token = await make_device(factory, world.org)
    for name in ("current_subevent", "current_checkinlist"):
        for junk in ("abc", "-1", "1.5", str(2**40)):
            response = await _get(client, token, current_event="x", **{name: junk})
            assert response.status_code == 400, response.text
            assert response.json() == {name: ["A valid integer is required."]}


async def test_team_tokens_are_refused(client, world: World):
    response = await client.get(URL, headers=auth(world.admin))
    assert response.status_code == 403
