"""Seating test data: layouts, plans written to the database, events with their seats."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from sqlalchemy import insert, select

from admit.models import Event, Item, Organizer, Quota, Seat, SeatingPlan, SubEvent, quota_items
from admit.seating.sync import sync_seats
from tests.factories import Factory, World, auth


def layout(
    rows: dict[str, list[str]] | None = None,
    *,
    zone: str = "Ground floor",
    categories: tuple[str, ...] = ("Stalls", "Balcony"),
    name: str = "Hall",
) -> dict[str, Any]:
    """A layout with one zone; ``rows`` maps a row number to its seats as ``"<n>:<category>"``
    (guid ``<row>-<n>``). Default: row 1 with seats 1-3 in Stalls, row 2 with 1-2 in Balcony."""
    rows = rows or {"1": ["1:Stalls", "2:Stalls", "3:Stalls"], "2": ["1:Balcony", "2:Balcony"]}
    return {
        "name": name,
        "categories": [{"name": c, "color": "#ff0000"} for c in categories],
        "zones": [
            {
                "name": zone,
                "position": {"x": 0, "y": 0},
                "rows": [
                    {
                        "row_number": row,
                        "position": {"x": 0, "y": 10 * index},
                        "seats": [
                            {
                                "seat_guid": f"{row}-{spec.split(':')[0]}",
                                "seat_number": spec.split(":")[0],
                                "category": spec.split(":")[1],
                                "position": {"x": 10 * n, "y": 0},
                            }
                            for n, spec in enumerate(seats)
                        ],
                    }
                    for index, (row, seats) in enumerate(rows.items())
                ],
                "areas": [],
            }
        ],
        "size": {"width": 600, "height": 400},
    }


def plans_url(world: World, suffix: str = "") -> str:
    return f"/api/v1/organizers/{world.org.slug}/seatingplans/{suffix}"


def event_url(event: Event, organizer: Organizer, suffix: str = "") -> str:
    return f"/api/v1/organizers/{organizer.slug}/events/{event.slug}/{suffix}"


def seats_url(
    world: World, suffix: str = "", subevent: SubEvent | None = None, event: Event | None = None
) -> str:
    base = event_url(event or world.event, world.org)
    if subevent is not None:
        return f"{base}subevents/{subevent.id}/seats/{suffix}"
    return f"{base}seats/{suffix}"


async def plan(factory: Factory, organizer: Organizer, data: dict | None = None) -> SeatingPlan:
    return await factory._add(  # type: ignore[return-value]
        SeatingPlan(organizer_id=organizer.id, name="Hall", layout=data or layout())
    )


async def ticket(
    factory: Factory, event: Event, name: str = "Stalls ticket", quota: int | None = 100
) -> Item:
    async with factory.sessionmaker() as session:
        item = Item(event_id=event.id, name={"en": name}, default_price=Decimal("30.00"))
        session.add(item)
        await session.flush()
        q = Quota(event_id=event.id, name=f"Q {name}", size=quota)
        session.add(q)
        await session.flush()
        await session.execute(insert(quota_items).values(quota_id=q.id, item_id=item.id))
        await session.commit()
        return item


async def seated_event(
    factory: Factory, event: Event, mapping: dict[str, int | None], data: dict | None = None
) -> SeatingPlan:
    """Gives ``event`` a plan and its seats directly (not through the API under test)."""
    organizer_id = event.organizer_id
    async with factory.sessionmaker() as session:
        obj = SeatingPlan(organizer_id=organizer_id, name="Hall", layout=data or layout())
        session.add(obj)
        await session.flush()
        stored = await session.get(Event, event.id)
        assert stored is not None
        stored.seating_plan = obj.id
        stored.seat_category_mapping = mapping
        await sync_seats(session, event.id, None, obj.id, mapping)
        await session.commit()
        return obj


async def seats(factory: Factory, event: Event, subevent: SubEvent | None = None) -> list[Seat]:
    async with factory.sessionmaker() as session:
        query = select(Seat).where(Seat.event_id == event.id)
        query = query.where(
            Seat.subevent_id.is_(None) if subevent is None else Seat.subevent_id == subevent.id
        )
        return list(await session.scalars(query.order_by(Seat.sorting_rank)))


async def seat_by_guid(factory: Factory, event: Event, guid: str) -> Seat:
    found = {s.seat_guid: s for s in await seats(factory, event)}
    return found[guid]


async def subevent(factory: Factory, event: Event, name: str = "Date") -> SubEvent:
    sub = SubEvent(
        event_id=event.id,
        name={"en": name},
        active=True,
        date_from=dt.datetime(2030, 6, 1, 19, tzinfo=dt.UTC),
    )
    return await factory._add(sub)  # type: ignore[return-value]


async def cart(client: Any, world: World, item: Item, seat: str | None, **kw: Any) -> Any:
    body = {"item": item.id, "price": "30.00", "seat": seat, **kw}
    return await client.post(
        event_url(world.event, world.org, "cartpositions/"), json=body, headers=auth(world.admin)
    )


async def order(client: Any, world: World, positions: list[dict[str, Any]], **kw: Any) -> Any:
    body = {"email": "fan@example.org", "positions": positions, **kw}
    return await client.post(
        event_url(world.event, world.org, "orders/"), json=body, headers=auth(world.admin)
    )
