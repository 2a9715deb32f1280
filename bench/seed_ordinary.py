"""The data of the ordinary-requests benchmark (``bench/ordinary.py``), written in about half a
minute on top of ``admit demo``.

``democon`` (the demo event: regular and student tickets, a T-shirt add-on with four sizes in
an add-on category, a dietary question, two quotas, the "Entrance" check-in list) gets:

- a bigger catalog: "Conference ticket" and "Workshop" with four questions (``bench/seed.py``),
  a day pass with three variations and a quota each, five workshops with a quota each, three
  more questions for the tickets; the regular ticket also asks the age question, and the
  conference ticket offers the T-shirt add-on;
- the demo quotas raised to a million, so the order scenarios never sell out;
- 300 vouchers (item, variation and quota bound, every price mode, tags, a few blocking);
- 20,000 orders (``--orders``) with two tickets each, a quarter with a T-shirt add-on, answers
  to the four questions, payments, fees, and check-ins on "Entrance" for 30 % of paid orders.

``demotours``, a new event series of the demo organizer, holds the subevents: 120 dates of a
tour with a quota each and price overrides on every third, for ``E/subevents/``.

Catalog rows go through SQLAlchemy Core with the models (their defaults fill the columns), the
orders by COPY. The sales ledger is rebuilt afterwards (``admit recount-sales --fix``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import insert, select, update

from bench.seed import Extras, add_catalog, dsn, event_id_of, write_orders

ORGANIZER = "demo"
EVENT = "democon"
SERIES = "demotours"
VOUCHERS = 300
SUBEVENTS = 120


@dataclass
class Seeded:
    """Ids the scenarios send in their request bodies and URLs."""

    regular: int
    student: int
    shirt: int
    shirt_m: int
    diet_question: int
    diet_vegan: int
    age_question: int
    checkin_list: int
    counts: dict[str, int]


async def _ids(conn: Any, stmt: Any, rows: list[dict[str, Any]]) -> list[int]:
    """Inserts ``rows`` and returns their ids in the same order."""
    result = await conn.execute(stmt.returning(stmt.table.c.id, sort_by_parameter_order=True), rows)
    return list(result.scalars().all())


async def _one(conn: Any, model: Any, **values: Any) -> int:
    return int(await conn.scalar(insert(model).values(**values).returning(model.id)))


async def _quota(conn: Any, event_id: int, name: str, size: int, items: list[int],
                 variations: Sequence[int] = (), subevent: int | None = None) -> int:  # fmt: skip
    from admit.models import Quota
    from admit.models.quotas import quota_items, quota_variations

    quota_id = await conn.scalar(
        insert(Quota)
        .values(event_id=event_id, name=name, size=size, subevent_id=subevent)
        .returning(Quota.id)
    )
    await conn.execute(insert(quota_items), [{"quota_id": quota_id, "item_id": i} for i in items])
    if variations:
        await conn.execute(
            insert(quota_variations),
            [{"quota_id": quota_id, "variation_id": v} for v in variations],
        )
    return quota_id


async def _demo_ids(conn: Any, event_id: int) -> dict[str, Any]:
    from admit.models import CheckinList, Item, ItemCategory, ItemVariation, Question
    from admit.models.questions import QuestionOption

    items = dict(
        (
            await conn.execute(
                select(Item.name["en"].as_string(), Item.id).where(Item.event_id == event_id)
            )
        )
        .tuples()
        .all()
    )
    shirt = items["Conference T-shirt"]
    sizes = dict(
        (
            await conn.execute(
                select(ItemVariation.value["en"].as_string(), ItemVariation.id)
                .where(ItemVariation.item_id == shirt)
                .order_by(ItemVariation.position)
            )
        )
        .tuples()
        .all()
    )
    diet = await conn.scalar(
        select(Question.id).where(Question.event_id == event_id, Question.identifier == "DIET")
    )
    vegan = await conn.scalar(
        select(QuestionOption.id).where(
            QuestionOption.question_id == diet, QuestionOption.identifier == "VEGAN"
        )
    )
    return {
        "regular": items["Regular ticket"],
        "student": items["Student ticket"],
        "shirt": shirt,
        "sizes": sizes,
        "diet": diet,
        "vegan": vegan,
        "merch": await conn.scalar(
            select(ItemCategory.id).where(
                ItemCategory.event_id == event_id, ItemCategory.is_addon.is_(True)
            )
        ),
        "tickets": await conn.scalar(
            select(ItemCategory.id).where(
                ItemCategory.event_id == event_id, ItemCategory.is_addon.is_(False)
            )
        ),
        "entrance": await conn.scalar(
            select(CheckinList.id).where(CheckinList.event_id == event_id).order_by(CheckinList.id)
        ),
    }


async def _more_catalog(conn: Any, event_id: int, demo: dict[str, Any]) -> None:
    """Day pass with variations, workshops, three more questions, quotas: a mid-size event."""
    from admit.models import Item, ItemCategory, ItemVariation, Question, Quota, TaxRule
    from admit.models.questions import question_items

    vat = await conn.scalar(select(TaxRule.id).where(TaxRule.event_id == event_id).limit(1))
    await conn.execute(
        update(Quota).where(Quota.event_id == event_id).values(size=1_000_000)
    )  # the demo quotas: the order scenarios must not sell out
    day_pass = await _one(
        conn, Item, event_id=event_id, category_id=demo["tickets"], tax_rule_id=vat,
        name={"en": "Day pass", "de": "Tageskarte"}, default_price=Decimal("45.00"),
        admission=True, personalized=True, position=2,
    )  # fmt: skip
    days = await _ids(
        conn,
        insert(ItemVariation),
        [
            {"item_id": day_pass, "value": {"en": day}, "position": n,
             "default_price": Decimal("45.00") if n < 2 else Decimal("35.00")}
            for n, day in enumerate(("Friday", "Saturday", "Sunday"))
        ],
    )  # fmt: skip
    for day, variation in zip(("Friday", "Saturday", "Sunday"), days, strict=True):
        await _quota(conn, event_id, f"Day pass {day}", 300, [day_pass], [variation])
    workshops_category = await _one(
        conn, ItemCategory, event_id=event_id, name={"en": "Workshops"}, position=2
    )
    topics = ("Python", "PostgreSQL", "Accessibility", "Typography", "Security")
    workshops = await _ids(
        conn,
        insert(Item),
        [
            {"event_id": event_id, "category_id": workshops_category, "tax_rule_id": vat,
             "name": {"en": f"Workshop: {t}"}, "default_price": Decimal("25.00"),
             "admission": True, "position": n, "max_per_order": 2}
            for n, t in enumerate(topics)
        ],
    )  # fmt: skip
    for topic, workshop in zip(topics, workshops, strict=True):
        await _quota(conn, event_id, f"Workshop {topic}", 30, [workshop])
    asked = await _ids(
        conn,
        insert(Question),
        [
            {"event_id": event_id, "question": {"en": "Company"}, "type": "S", "position": 1,
             "identifier": "COMPANY"},
            {"event_id": event_id, "question": {"en": "Accessibility needs"}, "type": "T",
             "position": 2, "identifier": "ACCESS", "help_text": {"en": "We will contact you."}},
            {"event_id": event_id, "question": {"en": "Newsletter"}, "type": "B", "position": 3,
             "identifier": "NEWSLETTER"},
        ],
    )  # fmt: skip
    await conn.execute(
        insert(question_items),
        [
            {"question_id": q, "item_id": i}
            for q in asked
            for i in (demo["regular"], demo["student"], day_pass)
        ],
    )


async def _vouchers(conn: Any, event_id: int, demo: dict[str, Any]) -> None:
    from admit.models import Quota, Voucher

    quotas = list(
        (await conn.execute(select(Quota.id).where(Quota.event_id == event_id))).scalars().all()
    )
    sizes = list(demo["sizes"].values())
    modes = [("none", "0.00"), ("percent", "10.00"), ("subtract", "5.00"), ("set", "50.00")]
    rows = []
    for n in range(VOUCHERS):
        mode, value = modes[n % len(modes)]
        bound = n % 5
        rows.append(
            {
                "event_id": event_id,
                "code": f"BENCH{n:05d}",
                "max_usages": 1 + n % 10,
                "price_mode": mode,
                "value": Decimal(value),
                "item_id": demo["regular"] if bound in (0, 1) else (
                    demo["shirt"] if bound == 2 else None),
                "variation_id": sizes[n % len(sizes)] if bound == 2 else None,
                "quota_id": quotas[n % len(quotas)] if bound == 3 else None,
                "block_quota": bound == 0 and n < 100,
                "tag": ("press", "partner", "staff", "")[n % 4],
                "comment": f"Batch {n // 50}",
                "valid_until": dt.datetime(2031, 1, 1, tzinfo=dt.UTC) if n % 3 == 0 else None,
            }
        )  # fmt: skip
    await conn.execute(insert(Voucher), rows)


async def _series(conn: Any, organizer_id: int) -> None:
    """``demotours``: an event series with SUBEVENTS dates, a quota each, overrides on some."""
    from admit.models import Event, Item, ItemVariation, SubEvent, TaxRule
    from admit.models.subevents import SubEventItem, SubEventItemVariation

    start = dt.datetime(2031, 3, 1, 10, tzinfo=dt.UTC)
    series = await _one(
        conn, Event, organizer_id=organizer_id, slug=SERIES, name={"en": "Demo city tours"},
        date_from=start, has_subevents=True, timezone="Europe/Berlin", plugins=["banktransfer"],
        location={"en": "Old town"},
    )  # fmt: skip
    vat = await _one(conn, TaxRule, event_id=series, name={"en": "VAT"}, rate=Decimal("7.00"))
    tour = await _one(
        conn, Item, event_id=series, tax_rule_id=vat, name={"en": "Tour ticket"},
        default_price=Decimal("20.00"), admission=True,
    )  # fmt: skip
    adult, child = await _ids(
        conn,
        insert(ItemVariation),
        [
            {"item_id": tour, "value": {"en": "Adult"}, "position": 0},
            {"item_id": tour, "value": {"en": "Child"}, "position": 1,
             "default_price": Decimal("10.00")},
        ],
    )  # fmt: skip
    dates = await _ids(
        conn,
        insert(SubEvent),
        [
            {"event_id": series, "name": {"en": f"City tour {n + 1}", "de": f"Führung {n + 1}"},
             "active": True, "date_from": start + dt.timedelta(days=n),
             "date_to": start + dt.timedelta(days=n, hours=2),
             "location": {"en": ("Market square", "Cathedral", "Harbour")[n % 3]},
             "meta_data": {}}
            for n in range(SUBEVENTS)
        ],
    )  # fmt: skip
    for n, date in enumerate(dates):
        await _quota(conn, series, f"Tour {n + 1}", 25, [tour], [adult, child], subevent=date)
    overridden = dates[::3]
    await conn.execute(
        insert(SubEventItem),
        [{"subevent_id": d, "item_id": tour, "price": Decimal("25.00")} for d in overridden],
    )
    await conn.execute(
        insert(SubEventItemVariation),
        [{"subevent_id": d, "variation_id": child, "price": Decimal("12.50")} for d in overridden],
    )


async def seed(url: str, orders: int = 20_000) -> Seeded:
    """Everything above, on a database where ``admit demo`` ran."""
    import asyncpg

    from admit.db import create_database
    from admit.models import Event, ItemAddOn, Organizer
    from admit.models.questions import question_items

    raw = await asyncpg.connect(dsn(url))
    try:
        catalog = await add_catalog(raw, await event_id_of(raw, ORGANIZER, EVENT))
    finally:
        await raw.close()
    db = create_database(url)
    try:
        async with db.engine.begin() as conn:
            organizer_id = await conn.scalar(
                select(Organizer.id).where(Organizer.slug == ORGANIZER)
            )
            event_id = await conn.scalar(
                select(Event.id).where(Event.organizer_id == organizer_id, Event.slug == EVENT)
            )
            demo = await _demo_ids(conn, event_id)
            await _more_catalog(conn, event_id, demo)
            await _quota(conn, event_id, "Conference and workshop", 100_000, catalog.items)
            await conn.execute(
                insert(ItemAddOn).values(
                    base_item_id=catalog.items[0], addon_category_id=demo["merch"], max_count=1
                )
            )
            await conn.execute(
                insert(question_items),
                [
                    {"question_id": catalog.questions["AGE"], "item_id": demo["regular"]},
                    {"question_id": catalog.questions["AGE"], "item_id": demo["student"]},
                ],
            )
            await _vouchers(conn, event_id, demo)
            await _series(conn, organizer_id)
    finally:
        await db.dispose()
    extras = Extras(
        addon_item=demo["shirt"],
        addon_variations=list(demo["sizes"].values()),
        addon_price=Decimal("25.00"),
        addon_tax=Decimal("3.99"),
        addon_share=0.25,
        checkin_list=demo["entrance"],
        checkin_share=0.3,
    )
    raw = await asyncpg.connect(dsn(url))
    try:
        counts = await write_orders(raw, catalog, orders, extras=extras)
        # As autovacuum would after a load (it is off on some benchmark machines): the
        # statistics, and the visibility map, without which a count that could read an
        # index alone reads every row of the table too (orders: 5.8 ms against 1.4 ms).
        await raw.execute("VACUUM ANALYZE")
    finally:
        await raw.close()
    return Seeded(
        regular=demo["regular"],
        student=demo["student"],
        shirt=demo["shirt"],
        shirt_m=demo["sizes"]["M"],
        diet_question=demo["diet"],
        diet_vegan=demo["vegan"],
        age_question=catalog.questions["AGE"],
        checkin_list=demo["entrance"],
        counts=counts,
    )
