"""The check-in views rendered from rows answer as their references:

- a ticket on a check-in list (``checkin/position_rows.py``) is the order position as its
  detail shows it (itself held to the ORM renderer in ``tests/orders/test_row_parity.py``)
  with the list's differences: only that list's check-ins, no seat, print log or download,
  the attendee name falling back to the main ticket's and then to the invoice address's,
  and ``require_attention`` from the order, the product or the variation;
- the check-in history (``E/checkins/``) answers byte for byte as its read schema does.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

import httpx
import orjson
import pytest
from sqlalchemy import select, update

from admit.checkin.history import CheckinHistory
from admit.models import Item, ItemVariation, Order, OrderPosition
from tests.factories import Factory, World, auth
from tests.orders import helpers as oh
from tests.orders import rich


def _fail(url: str, expected: Any, got: Any) -> None:
    a = json.dumps(expected, indent=1).splitlines()
    b = json.dumps(got, indent=1).splitlines()
    diff = "\n".join(difflib.unified_diff(a, b, "expected", "rows", lineterm=""))
    pytest.fail(f"{url}: differs\n{diff or 'key order'}")


async def _flags(factory: Factory, codes: list[str]) -> dict[int, dict[str, Any]]:
    """Asks for attention on one order, the T-shirt and the VIP variation; returns what the
    list's answer must say about each position."""
    async with factory.sessionmaker() as s:
        rows = (
            await s.execute(
                select(OrderPosition, Order.code, Order.invoice_address, Order)
                .join(Order, Order.id == OrderPosition.order_id)
                .order_by(OrderPosition.id)
            )
        ).all()
        shirt = next(p.item_id for p, *_ in rows if p.addon_to_id is not None)
        vip = next(p.variation_id for p, *_ in rows if p.variation_id is not None)
        await s.execute(update(Item).where(Item.id == shirt).values(checkin_attention=True))
        await s.execute(
            update(ItemVariation).where(ItemVariation.id == vip).values(checkin_attention=True)
        )
        await s.execute(update(Order).where(Order.code == codes[1]).values(checkin_attention=True))
        await s.commit()
        names = {p.id: p.attendee_name_cached for p, *_ in rows}
        expected = {}
        for p, code, address, order in rows:
            name = p.attendee_name_cached
            if not name:
                name = names.get(p.addon_to_id) or (address or {}).get("name")
            attention = code in codes[:2] or p.item_id == shirt or p.variation_id == vip
            expected[p.id] = {
                "attendee_name": name,
                "require_attention": attention,
                "order__status": order.status,
                "order__valid_if_pending": order.valid_if_pending,
                "order__require_approval": order.require_approval,
                "order__locale": order.locale,
            }
        return expected


ORDER_FIELDS = (
    "order__status",
    "order__valid_if_pending",
    "order__require_approval",
    "order__locale",
)


def _ticket(position: dict[str, Any], list_id: int, known: dict[str, Any]) -> dict[str, Any]:
    """The order position (detail) as the check-in list shows it."""
    out = dict(position)
    out["attendee_name"] = known["attendee_name"]
    out["seat"] = None
    out["checkins"] = [c for c in position["checkins"] if c["list"] == list_id]
    out["downloads"] = []
    out["print_logs"] = []
    out["require_attention"] = known["require_attention"]
    for name in ORDER_FIELDS:  # the order's, as the reference's list positions carry them
        out[name] = known[name]
    return out


async def test_checkin_list_positions_render_as_the_positions(
    client: httpx.AsyncClient, world: World, factory: Factory
) -> None:
    h = auth(world.admin)
    codes, lists = await rich.seed(client, world, factory)
    known = await _flags(factory, codes)
    positions = {}
    for pid in known:
        url = oh.url(world, f"orderpositions/{pid}/?include_canceled_positions=true")
        r = await client.get(url, headers=h)
        if r.status_code == 200:
            positions[pid] = r.json()
    compared = 0
    for list_id in lists:
        base = oh.url(world, f"checkinlists/{list_id}/positions/")
        for variant in (
            "",
            "?ordering=-last_checked_in",
            "?ordering=order__email,-positionid",
            "?page_size=2&page=2",
            "?has_checkin=true",
            "?ignore_status=true",
            "?search=ada",
        ):
            url = base + variant
            listed = await client.get(url, headers=h)
            assert listed.status_code == 200, listed.text
            for got in listed.json()["results"]:
                expected = _ticket(positions[got["id"]], list_id, known[got["id"]])
                if orjson.dumps(got) != orjson.dumps(expected):
                    _fail(url, expected, got)
                one = f"{base}{got['id']}/{variant}"  # the same tickets (filters) apply
                detail = await client.get(one, headers=h)
                if detail.content != orjson.dumps(got):
                    _fail(one, got, detail.json())
                compared += 1
        search = f"/api/v1/organizers/{world.org.slug}/checkinrpc/search/?list={list_id}&search=a"
        for got in (await client.get(search, headers=h)).json()["results"]:
            expected = _ticket(positions[got["id"]], list_id, known[got["id"]])
            if orjson.dumps(got) != orjson.dumps(expected):
                _fail(search, expected, got)
    assert compared >= 20
    # The data reached every branch of the renderer.
    shown = [
        (await client.get(oh.url(world, f"checkinlists/{lists[0]}/positions/"), headers=h)).json()
    ][0]["results"]
    assert {p["attendee_name"] for p in shown} >= {"Ada L", "Inv Name"}
    assert any(p["require_attention"] for p in shown) and not all(
        p["require_attention"] for p in shown
    )
    assert any(p["checkins"] for p in shown)


async def test_checkin_history_renders_as_its_schema(
    client: httpx.AsyncClient,
    world: World,
    factory: Factory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = auth(world.admin)
    await rich.seed(client, world, factory)
    base = oh.url(world, "checkins/")
    urls = [
        base,
        f"{base}?ordering=-datetime",
        f"{base}?successful=false",
        f"{base}?page_size=1&page=3",
    ]
    listed = (await client.get(base, headers=h)).json()["results"]
    assert len(listed) == 3
    urls += [f"{base}{c['id']}/" for c in listed] + [f"{base}999999/"]
    for url in urls:
        rows = await client.get(url, headers=h)
        with monkeypatch.context() as patch:
            patch.setattr(CheckinHistory, "renderer", None)
            schema = await client.get(url, headers=h)
        assert rows.status_code == schema.status_code, url
        if rows.content != schema.content:
            _fail(url, schema.json(), rows.json())
