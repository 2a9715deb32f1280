"""Filters of the order lists (event and organizer) and of the position list, as the reference
names them; a bad value is a 400 naming the parameter."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import update

from admit.models import Checkin, CheckinList, Item, Order, OrderPosition, SubEvent, Voucher
from tests.checkin.helpers import addon
from tests.factories import auth
from tests.tickets import helpers as t

T0 = dt.datetime(2031, 5, 1, 12, 0, tzinfo=dt.UTC)


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@pytest.fixture
async def scene(world, factory):
    """Three orders of one event and one of a second event of the same organizer."""
    item = await t.ticket_item(factory, world.event, "Ticket")
    other = await t.ticket_item(factory, world.event, "Other")
    early = await factory._add(
        SubEvent(event_id=world.event.id, name={"en": "Early"}, date_from=T0, date_to=None)
    )
    late = await factory._add(
        SubEvent(
            event_id=world.event.id,
            name={"en": "Late"},
            date_from=T0 + dt.timedelta(days=10),
            date_to=T0 + dt.timedelta(days=11),
        )
    )
    a, (pa,) = await t.order(
        factory,
        world.event,
        item,
        ["Ada Lovelace"],
        status="p",
        locale="de",
        datetime=T0 - dt.timedelta(days=3),
        invoice_address={"name": "Countess of Lovelace", "company": "Analytical 100% Ltd"},
        position={"subevent_id": early.id},
    )
    b, (pb,) = await t.order(
        factory,
        world.event,
        other,
        ["Bob Byte"],
        status="n",
        datetime=T0 - dt.timedelta(days=2),
        comment="call back",
        position={"subevent_id": late.id},
    )
    c, (pc,) = await t.order(
        factory, world.event, item, ["Cy"], status="c", datetime=T0 - dt.timedelta(days=1)
    )
    async with factory.sessionmaker() as session:
        for order, email in ((a, "ada@example.org"), (b, "bob@example.org"), (c, None)):
            await session.execute(update(Order).where(Order.id == order.id).values(email=email))
        await session.commit()
    second = await factory.event(world.org, "second")
    item2 = await t.ticket_item(factory, second, "Elsewhere")
    d, (pd,) = await t.order(factory, second, item2, ["Di"], status="p", datetime=T0)
    return {
        "item": item,
        "other": other,
        "early": early,
        "late": late,
        "orders": (a, b, c, d),
        "positions": (pa, pb, pc, pd),
    }


async def _codes(client, world, url: str) -> list[str]:
    r = await client.get(url, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    return [o["code"] for o in r.json()["results"]]


async def test_order_filters(client, world, scene):
    a, b, c, _d = (o.code for o in scene["orders"])
    base = t.url(world, "orders/")
    codes = lambda q: _codes(client, world, base + q)  # noqa: E731
    assert await codes("") == [a, b, c]
    assert await codes("?locale=de") == [a]
    assert await codes("?status__in=p,C") == [a, c]
    assert await codes("?status=P") == [a]
    assert await codes(f"?code__in={a.lower()},{c}") == [a, c]
    assert await codes(f"?code={b.lower()}") == [b]
    assert await codes(f"?item__in={scene['other'].id}") == [b]
    assert await codes(f"?item__in={scene['item'].id},{scene['other'].id}") == [a, b, c]
    # created_since is inclusive, created_before exclusive.
    assert await codes(f"?created_since={_iso(T0 - dt.timedelta(days=2))}") == [b, c]
    assert await codes(f"?created_before={_iso(T0 - dt.timedelta(days=2))}") == [a]
    # A date ends after (or, without an end, begins after) subevent_after; exclusive.
    assert await codes(f"?subevent_after={_iso(T0)}") == [b]
    assert await codes(f"?subevent_after={_iso(T0 - dt.timedelta(hours=1))}") == [a, b]
    assert await codes(f"?subevent_before={_iso(T0 + dt.timedelta(days=10))}") == [a]
    assert await codes(f"?subevent_before={_iso(T0 + dt.timedelta(days=10, seconds=1))}") == [a, b]


async def test_order_search(client, world, scene):
    a, b, c, _d = (o.code for o in scene["orders"])
    _pa, pb, *_ = scene["positions"]
    base = t.url(world, "orders/?search=")
    codes = lambda q: _codes(client, world, base + q)  # noqa: E731
    assert await codes(a.lower()) == [a]  # the code, any case
    assert await codes(f"summit-{a[-3:]}") == [a]  # <event slug>-<end of the code>
    assert await codes("nothere-" + a) == []
    assert await codes("BOB@EXAMPLE") == [b]  # e-mail
    assert await codes("lovelace") == [a]  # attendee name and invoice name
    assert await codes("countess") == [a]  # invoice name only
    assert await codes("analytical") == [a]  # invoice company
    assert await codes("100%25") == [a]  # "%" matched as typed
    assert await codes("%25") == [a]
    assert await codes("_") == []  # "_" is no wildcard
    assert await codes("call back") == [b]  # comment
    assert await codes(pb.secret[:8]) == [b]  # a ticket secret's start
    assert await codes(pb.secret[4:12]) == []  # ... not its middle
    assert await codes("cy") == [c]


async def test_organizer_list_filters(client, world, scene):
    a, b, c, d = (o.code for o in scene["orders"])
    base = f"/api/v1/organizers/{world.org.slug}/orders/"
    codes = lambda q: _codes(client, world, base + q)  # noqa: E731
    assert await codes("") == [a, b, c, d]
    assert await codes("?status__in=p") == [a, d]
    assert await codes(f"?code__in={d},{b}") == [b, d]
    assert await codes("?search=second-") == [d]
    assert await codes(f"?created_since={_iso(T0)}") == [d]
    assert await codes(f"?subevent_after={_iso(T0)}") == [b]
    # pdf_data is accepted and, as in the reference, only the event lists fill it.
    r = await client.get(base + "?pdf_data=true", headers=auth(world.admin))
    assert r.status_code == 200
    assert all("pdf_data" not in p for o in r.json()["results"] for p in o["positions"])


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("item__in=1,x", "item__in"),
        ("item__in=99999999999", "item__in"),
        ("created_since=yesterday", "created_since"),
        ("created_before=2031-13-01", "created_before"),
        ("subevent_after=x", "subevent_after"),
        ("subevent_before=1.5", "subevent_before"),
        ("pdf_data=perhaps", "pdf_data"),
        ("item=1e3", "item"),
        ("status__in=" + ",".join(["p"] * 1001), "status__in"),
    ],
)
async def test_bad_order_filter_values(client, world, scene, query, field):
    for base in (t.url(world, "orders/"), f"/api/v1/organizers/{world.org.slug}/orders/"):
        r = await client.get(f"{base}?{query}", headers=auth(world.admin))
        assert r.status_code == 400, r.text
        body = r.json()
        assert list(body) == [field] and all(isinstance(m, str) for m in body[field])


async def test_position_filters(client, world, factory, scene):
    pa, pb, pc, _pd = scene["positions"]
    a, b, _c, _d = scene["orders"]
    addon_item = await factory._add(Item(event_id=world.event.id, name={"en": "Parking"}))
    extra = await addon(factory, a, pa, addon_item, 2)
    voucher = await factory._add(Voucher(event_id=world.event.id, code="SAVE-10"))
    async with factory.sessionmaker() as session:
        await session.execute(
            update(OrderPosition).where(OrderPosition.id == pb.id).values(voucher_id=voucher.id)
        )
        clist = CheckinList(event_id=world.event.id, name="Door")
        session.add(clist)
        await session.flush()
        session.add(
            Checkin(event_id=world.event.id, list_id=clist.id, position_id=pc.id, type="entry")
        )
        await session.commit()

    async def ids(query: str) -> list[int]:
        r = await client.get(t.url(world, "orderpositions/") + query, headers=auth(world.admin))
        assert r.status_code == 200, r.text
        return [p["id"] for p in r.json()["results"]]

    assert await ids("") == [pa.id, extra.id, pb.id, pc.id]
    assert await ids("?order__status__in=n,c") == [pb.id, pc.id]
    assert await ids("?order__status=p") == [pa.id, extra.id]
    assert await ids(f"?item__in={scene['other'].id},{addon_item.id}") == [extra.id, pb.id]
    assert await ids(f"?subevent__in={scene['early'].id},{scene['late'].id}") == [pa.id, pb.id]
    assert await ids(f"?addon_to={pa.id}") == [extra.id]
    assert await ids(f"?addon_to__in={pa.id},{pb.id}") == [extra.id]
    assert await ids(f"?order={b.code.lower()}") == [pb.id]
    assert await ids(f"?pseudonymization_id={pc.pseudonymization_id}") == [pc.id]
    assert await ids(f"?voucher={voucher.id}") == [pb.id]
    assert await ids("?voucher__code=save-10") == [pb.id]
    assert await ids("?voucher__code=SAVE") == []
    assert await ids("?has_checkin=true") == [pc.id]
    # attendee_name: the whole name in any case, also the main position's for an add-on.
    assert await ids("?attendee_name=ada LOVELACE") == [pa.id, extra.id]
    assert await ids("?attendee_name=ada") == []
    assert await ids("?search=lovelace") == [pa.id, extra.id]
    assert await ids("?search=ANALYTICAL") == [pa.id, extra.id]  # invoice company
    assert await ids("?search=bob@example") == [pb.id]  # the order's e-mail
    assert await ids(f"?search={b.code.lower()}") == [pb.id]  # the order code
    assert await ids(f"?search={pc.secret[:6]}") == [pc.id]
    r = await client.get(
        t.url(world, "orderpositions/?variation__in=a&addon_to=-&has_checkin=x"),
        headers=auth(world.admin),
    )
    assert r.status_code == 400
    assert set(r.json()) == {"variation__in", "addon_to", "has_checkin"}
