"""Test data for check-in: tickets, paid orders and lists written straight to the database,
and small wrappers around the check-in endpoints."""

from __future__ import annotations

import datetime as dt
import itertools
import secrets
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import insert

from admit.db import utcnow
from admit.models import (
    CheckinList,
    Event,
    Item,
    ItemVariation,
    Order,
    OrderPosition,
    Question,
    QuestionOption,
    checkin_list_items,
    question_items,
)
from admit.quotas import ledger
from tests.factories import Factory, World, auth

_codes = itertools.count(1)


def event_url(world: World, rest: str, event: Event | None = None) -> str:
    slug = (event or world.event).slug
    return f"/api/v1/organizers/{world.org.slug}/events/{slug}/{rest}"


def rpc_url(world: World, name: str) -> str:
    return f"/api/v1/organizers/{world.org.slug}/checkinrpc/{name}/"


async def ticket(factory: Factory, event: Event, name: str = "Ticket", **kw: Any) -> Item:
    kw.setdefault("default_price", Decimal("23.00"))
    kw.setdefault("admission", True)
    return await factory._add(Item(event_id=event.id, name={"en": name}, **kw))  # type: ignore[return-value]


async def variation(factory: Factory, item: Item, value: str = "Red", **kw: Any) -> ItemVariation:
    return await factory._add(ItemVariation(item_id=item.id, value={"en": value}, **kw))  # type: ignore[return-value]


async def order(
    factory: Factory,
    event: Event,
    item: Item,
    *,
    status: str = "p",
    n: int = 1,
    variation: ItemVariation | None = None,
    position: dict[str, Any] | None = None,
    **kw: Any,
) -> tuple[Order, list[OrderPosition]]:
    """An order in ``status`` with ``n`` positions of ``item`` (each with a fresh secret)."""
    async with factory.sessionmaker() as session:
        obj = Order(
            event_id=event.id,
            code=f"K{next(_codes):05d}",
            status=status,
            secret=secrets.token_hex(16),
            expires=utcnow() + dt.timedelta(days=1),
            email="fan@example.org",
            **kw,
        )
        session.add(obj)
        await session.flush()
        positions = []
        for i in range(1, n + 1):
            fields: dict[str, Any] = {
                "price": Decimal("23.00"),
                "attendee_name_parts": {"_legacy": f"Guest {i}"},
                "attendee_name_cached": f"Guest {i}",
                **(position or {}),  # may replace the three above
            }
            pos = OrderPosition(
                order_id=obj.id,
                event_id=event.id,
                positionid=i,
                item_id=item.id,
                variation_id=variation.id if variation else None,
                secret=secrets.token_hex(16),
                web_secret=secrets.token_hex(16),
                pseudonymization_id=secrets.token_hex(5).upper(),
                **fields,
            )
            session.add(pos)
            positions.append(pos)
        await session.flush()
        await ledger.rebuild(session)  # written behind the API's back
        await session.commit()
        return obj, positions


async def checkin_list(
    factory: Factory, event: Event, name: str = "Entrance", *, items: list[Item] = (), **kw: Any
) -> CheckinList:
    if items:
        kw.setdefault("all_products", False)
    async with factory.sessionmaker() as session:
        obj = CheckinList(event_id=event.id, name=name, rules=kw.pop("rules", {}), **kw)
        session.add(obj)
        await session.flush()
        for it in items:
            await session.execute(insert(checkin_list_items).values(list_id=obj.id, item_id=it.id))
        await session.commit()
        return obj


async def question(
    factory: Factory,
    event: Event,
    items: list[Item],
    type_: str = "S",
    options: list[str] = (),  # type: ignore[assignment]
    **kw: Any,
) -> Question:
    async with factory.sessionmaker() as s:
        q = Question(
            event_id=event.id,
            question={"en": kw.pop("text", "Size?")},
            type=type_,
            identifier=kw.pop("identifier", secrets.token_hex(4).upper()),
            ask_during_checkin=kw.pop("ask_during_checkin", True),
            **kw,
        )
        s.add(q)
        await s.flush()
        for i, text in enumerate(options):
            s.add(
                QuestionOption(
                    question_id=q.id, identifier=f"OPT{i}", answer={"en": text}, position=i
                )
            )
        for it in items:
            await s.execute(insert(question_items).values(question_id=q.id, item_id=it.id))
        await s.commit()
        return q


async def redeem(
    client: httpx.AsyncClient,
    world: World,
    secret: str,
    lists: list[int],
    token: str | None = None,
    headers: dict[str, str] | None = None,
    **body: Any,
) -> httpx.Response:
    return await client.post(
        rpc_url(world, "redeem"),
        json={"secret": secret, "lists": lists, **body},
        headers=headers or auth(token or world.admin),
    )


async def device(
    factory: Factory, organizer: Any, *, gate: str | None = None, number: int = 1
) -> tuple[str, Any]:
    """An initialized device of ``organizer`` (all events), optionally at a new gate; returns
    its API token and the device row."""
    from admit.auth.credentials import hash_token
    from admit.models import Device, Gate

    gate_id = None
    if gate is not None:
        gate_row = await factory._add(Gate(organizer_id=organizer.id, name=gate))
        gate_id = gate_row.id  # type: ignore[attr-defined]
    token = secrets.token_hex(24)
    row = await factory._add(
        Device(
            organizer_id=organizer.id,
            device_id=number,
            unique_serial=secrets.token_hex(8),
            name=f"Scanner {number}",
            all_events=True,
            initialization_token=secrets.token_hex(16),
            initialized=utcnow(),
            api_token_hash=hash_token(token),
            gate_id=gate_id,
        )
    )
    return token, row


def device_auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Device {token}"}


async def addon(
    factory: Factory, order: Order, parent: OrderPosition, item: Item, positionid: int
) -> OrderPosition:
    """An add-on position under ``parent`` (with the sales ledger kept exact)."""
    async with factory.sessionmaker() as session:
        pos = OrderPosition(
            order_id=order.id,
            event_id=order.event_id,
            positionid=positionid,
            item_id=item.id,
            price=Decimal("5.00"),
            secret=secrets.token_hex(16),
            web_secret=secrets.token_hex(16),
            pseudonymization_id=secrets.token_hex(5).upper(),
            addon_to_id=parent.id,
        )
        session.add(pos)
        await session.flush()
        await ledger.rebuild(session)
        await session.commit()
        return pos
