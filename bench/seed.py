"""Orders written straight into PostgreSQL by COPY, for benchmarks that need a realistic event.

One generator serves the export benchmark (:func:`populate`: two positions an order, answers to
four questions) and the ordinary-requests benchmark (the same orders, plus add-on positions with
a variation and check-ins, see :class:`Extras`). The extras draw from a random generator of their
own, so the export data stays the same row for row whatever is added here.

Raw SQL, not the API: 20,000 orders through the API would take minutes; COPY takes seconds.
The sales ledger is not maintained here: callers rebuild it (``admit recount-sales --fix``)
before anything sells, and voucher counters stay untouched (no seeded position uses one).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

CODE_ALPHABET = "ABCDEFGHIJKLMNPQRSTUVWXYZ023456789"  # no O, no 1
DIETS = ["none", "vegetarian", "vegan", "gluten-free & lactose-free", "halal", "kosher"]
START = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


# The columns the seeders COPY orders and positions with (rows are tuples in this order).
ORDER_COLUMNS = [
    "id", "event_id", "code", "status", "testmode", "secret", "email", "locale",
    "datetime", "expires", "total", "sales_channel", "comment",
    "checkin_attention", "require_approval", "valid_if_pending", "meta_info",
    "last_modified",
]  # fmt: skip
POSITION_COLUMNS = [
    "id", "order_id", "event_id", "positionid", "item_id", "variation_id", "price",
    "tax_rate", "tax_value", "tax_rule_id", "attendee_name_parts",
    "attendee_name_cached", "attendee_email", "secret", "web_secret",
    "pseudonymization_id", "addon_to_id", "is_bundled", "canceled",
]  # fmt: skip


def order_code(n: int) -> str:
    chars = []
    for _ in range(7):
        n, r = divmod(n, len(CODE_ALPHABET))
        chars.append(CODE_ALPHABET[r])
    return "".join(reversed(chars))


def dsn(url: str) -> str:
    """An SQLAlchemy asyncpg URL as asyncpg itself takes it."""
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


async def next_id(conn: Any, table: str) -> int:
    return int(await conn.fetchval(f'SELECT coalesce(max(id), 0) + 1 FROM "{table}"'))


async def sync_sequence(conn: Any, table: str) -> None:
    await conn.execute(
        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
        f'(SELECT coalesce(max(id), 1) FROM "{table}"))'
    )


async def event_id_of(conn: Any, organizer: str, event: str) -> int:
    return int(
        await conn.fetchval(
            "SELECT e.id FROM events e JOIN organizers o ON o.id = e.organizer_id "
            "WHERE o.slug = $1 AND e.slug = $2",
            organizer,
            event,
        )
    )


@dataclass
class Catalog:
    """The two products every seeded order buys and the four questions its positions answer."""

    event_id: int
    rule_id: int
    items: list[int]
    prices: list[Decimal] = field(default_factory=lambda: [Decimal("89.00"), Decimal("25.00")])
    taxes: list[Decimal] = field(default_factory=lambda: [Decimal("14.21"), Decimal("3.99")])
    questions: dict[str, int] = field(default_factory=dict)
    options: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class Extras:
    """What the ordinary-requests benchmark adds to the plain orders.

    ``addon_share`` of the orders get a third position: ``addon_item`` (one of
    ``addon_variations``) as an add-on to the first ticket. ``checkin_share`` of the paid orders
    have both tickets checked in on ``checkin_list``.
    """

    addon_item: int
    addon_variations: list[int]
    addon_price: Decimal
    addon_tax: Decimal
    addon_share: float
    checkin_list: int
    checkin_share: float


async def add_catalog(conn: Any, event_id: int) -> Catalog:
    """A 19 % tax rule, "Conference ticket" and "Workshop", and four questions (number, text,
    choice, multiple choice) asked for both."""
    rule_id = await conn.fetchval(
        "INSERT INTO tax_rules (event_id, name, internal_name, rate, price_includes_tax, "
        '"default", eu_reverse_charge, home_country, keep_gross_if_rate_changes) '
        "VALUES ($1, $2, '', 19, true, false, false, '', false) RETURNING id",
        event_id,
        json.dumps({"en": "VAT", "de": "MwSt."}),
    )
    items = []
    for name, price in (("Conference ticket", "89.00"), ("Workshop", "25.00")):
        items.append(
            await conn.fetchval(
                "INSERT INTO items (event_id, tax_rule_id, name, internal_name, active, "
                "default_price, free_price, admission, personalized, position, "
                "require_voucher, hide_without_voucher, allow_cancel, checkin_attention, "
                "require_approval, require_bundling, allow_waitinglist, issue_giftcard, "
                "all_sales_channels, limit_sales_channels, meta_data, created) VALUES "
                "($1, $2, $3, '', true, $4, false, true, true, 0, false, false, true, "
                "false, false, false, true, false, true, '[]', '{}', now()) RETURNING id",
                event_id,
                rule_id,
                json.dumps({"en": name}),
                Decimal(price),
            )
        )
    catalog = Catalog(event_id=event_id, rule_id=rule_id, items=items)
    specs = [
        ("AGE", "N", {"en": "Age", "de": "Alter"}, []),
        ("DIET", "S", {"en": "Dietary needs", "de": "Ernährung"}, []),
        ("SHIRT", "C", {"en": "T-shirt size", "de": "T-Shirt-Größe"}, ["S", "M", "L", "XL"]),
        ("TOPICS", "M", {"en": "Topics", "de": "Themen"}, ["Music", "Art", "Tech"]),
    ]
    for position, (ident, kind, text, labels) in enumerate(specs):
        qid = await conn.fetchval(
            "INSERT INTO questions (event_id, question, type, required, position, "
            "identifier, ask_during_checkin, show_during_checkin, hidden, "
            "print_on_invoice, dependency_values, valid_file_portrait) VALUES "
            "($1, $2, $3, false, $4, $5, false, false, false, false, '[]', false) "
            "RETURNING id",
            event_id,
            json.dumps(text),
            kind,
            100 + position,
            f"BENCH_{ident}",
        )
        catalog.questions[ident] = qid
        for item_id in items:
            await conn.execute(
                "INSERT INTO question_items (question_id, item_id) VALUES ($1, $2)",
                qid,
                item_id,
            )
        catalog.options[ident] = [
            await conn.fetchval(
                "INSERT INTO question_options (question_id, identifier, answer, position) "
                "VALUES ($1, $2, $3, $4) RETURNING id",
                qid,
                f"{ident}{i}",
                json.dumps({"en": label}),
                i,
            )
            for i, label in enumerate(labels)
        ]
    return catalog


@dataclass
class _Rows:
    orders: list[tuple] = field(default_factory=list)
    positions: list[tuple] = field(default_factory=list)
    payments: list[tuple] = field(default_factory=list)
    fees: list[tuple] = field(default_factory=list)
    answers: list[tuple] = field(default_factory=list)
    chosen: list[tuple] = field(default_factory=list)
    checkins: list[tuple] = field(default_factory=list)


def _position(pid: int, oid: int, event_id: int, k: int, j: int, item: int, price: Decimal,
              tax: Decimal, rule_id: int, named: bool, variation: int | None = None,
              addon_to: int | None = None) -> tuple:  # fmt: skip
    name = f"Attendee {j}" if named else None
    return (
        pid, oid, event_id, k + 1, item, variation, price, Decimal("19.00"), tax, rule_id,
        json.dumps({"full_name": name} if named else {}), name,
        f"attendee{j}@example.org" if named else None, f"{j:032x}", f"w{j:031d}",
        f"p{j:015d}"[:16], addon_to, False, False,
    )  # fmt: skip


async def _copy(conn: Any, rows: _Rows) -> None:
    await conn.copy_records_to_table(
        "orders",
        records=rows.orders,
        columns=ORDER_COLUMNS,
    )
    await conn.copy_records_to_table(
        "order_positions",
        records=rows.positions,
        columns=POSITION_COLUMNS,
    )
    await conn.copy_records_to_table(
        "order_payments",
        records=rows.payments,
        columns=[
            "order_id", "local_id", "state", "amount", "provider", "created",
            "payment_date", "info",
        ],
    )  # fmt: skip
    await conn.copy_records_to_table(
        "order_fees",
        records=rows.fees,
        columns=[
            "order_id", "fee_type", "value", "description", "internal_type", "tax_rate",
            "tax_value", "canceled",
        ],
    )  # fmt: skip
    await conn.copy_records_to_table(
        "answers",
        records=rows.answers,
        columns=["id", "orderposition_id", "question_id", "answer"],
    )
    await conn.copy_records_to_table(
        "answer_options", records=rows.chosen, columns=["answer_id", "option_id"]
    )
    if rows.checkins:
        await conn.copy_records_to_table(
            "checkins",
            records=rows.checkins,
            columns=[
                "event_id", "list_id", "position_id", "seq", "type", "datetime", "created",
                "successful", "auto_checked_in", "forced",
            ],
        )  # fmt: skip


async def write_orders(
    conn: Any, catalog: Catalog, orders_n: int, seed: int = 7, extras: Extras | None = None
) -> dict[str, int]:
    """``orders_n`` orders of the catalog's two tickets (80 % paid with a confirmed payment,
    15 % pending, 5 % canceled; a service fee on every tenth), each ticket answering the four
    questions; with ``extras`` also add-ons and check-ins. Returns the row counts."""
    rng = random.Random(seed)
    more = random.Random(seed + 1)  # the extras' own draws keep ``rng``'s sequence unchanged
    event_id = catalog.event_id
    order_id0 = await next_id(conn, "orders")
    pid = await next_id(conn, "order_positions")
    answer_id = await next_id(conn, "answers")
    rows = _Rows()
    j = 0  # the running position number, unique within this call
    # Order dates lie in the future (the event's); the change stamp is the seeding itself, as
    # the database's triggers would have it (a stamp ahead of the clock would keep every
    # page probe of kit/stamps/pagecache.py answering "changed").
    stamped = dt.datetime.now(dt.UTC)
    for n in range(orders_n):
        oid = order_id0 + n
        roll = rng.random()
        status = "p" if roll < 0.8 else ("n" if roll < 0.95 else "c")
        when = START + dt.timedelta(seconds=rng.randrange(60 * 86400))
        has_fee = n % 10 == 0
        addon = extras is not None and more.random() < extras.addon_share
        total = catalog.prices[0] + catalog.prices[1] + (Decimal("2.50") if has_fee else 0)
        if addon:
            total += extras.addon_price
        rows.orders.append(
            (
                oid, event_id, order_code(n), status, False, f"{n:032x}",
                f"buyer{n}@example.org", "en", when, when + dt.timedelta(days=14), total,
                "web", "", False, False, False, "{}", stamped,
            )
        )  # fmt: skip
        if status == "p":
            rows.payments.append((oid, 1, "confirmed", total, "banktransfer", when, when, "{}"))
        if has_fee:
            rows.fees.append(
                (oid, "service", Decimal("2.50"), "Service", "", Decimal(0), Decimal(0), False)
            )
        checked_in = extras is not None and status == "p" and more.random() < extras.checkin_share
        first = pid
        for k in range(2):
            rows.positions.append(
                _position(pid, oid, event_id, k, j, catalog.items[k], catalog.prices[k],
                          catalog.taxes[k], catalog.rule_id, named=True)
            )  # fmt: skip
            rows.answers.append(
                (answer_id, pid, catalog.questions["AGE"], str(rng.randrange(18, 80)))
            )
            rows.answers.append((answer_id + 1, pid, catalog.questions["DIET"], rng.choice(DIETS)))
            shirt = rng.choice(catalog.options["SHIRT"])
            rows.answers.append((answer_id + 2, pid, catalog.questions["SHIRT"], "M"))
            rows.chosen.append((answer_id + 2, shirt))
            answer_id += 3
            if k == 0:
                picked = rng.sample(catalog.options["TOPICS"], rng.randrange(1, 3))
                rows.answers.append((answer_id, pid, catalog.questions["TOPICS"], "Music"))
                rows.chosen.extend((answer_id, o) for o in picked)
                answer_id += 1
            if checked_in:
                scanned = when + dt.timedelta(days=1, minutes=k)
                rows.checkins.append(
                    (event_id, extras.checkin_list, pid, 1, "entry", scanned, scanned, True,
                     False, False)
                )  # fmt: skip
            pid += 1
            j += 1
        if addon:
            rows.positions.append(
                _position(pid, oid, event_id, 2, j, extras.addon_item, extras.addon_price,
                          extras.addon_tax, catalog.rule_id, named=False,
                          variation=more.choice(extras.addon_variations), addon_to=first)
            )  # fmt: skip
            pid += 1
            j += 1
    await _copy(conn, rows)
    for table in ("orders", "order_positions", "answers", "checkins"):
        await sync_sequence(conn, table)
    return {
        "orders": len(rows.orders),
        "positions": len(rows.positions),
        "answers": len(rows.answers),
        "payments": len(rows.payments),
        "fees": len(rows.fees),
        "checkins": len(rows.checkins),
    }


async def populate(url: str, organizer: str, event: str, positions: int, seed: int = 7) -> dict:
    """Writes ``positions`` order positions (two per order) with answers into the event, by
    COPY; returns counts. The sales ledger is not maintained: the data is for reading."""
    import asyncpg

    conn = await asyncpg.connect(dsn(url))
    try:
        catalog = await add_catalog(conn, await event_id_of(conn, organizer, event))
        counts = await write_orders(conn, catalog, positions // 2, seed)
        counts.pop("checkins")
        await conn.execute("ANALYZE")
        return counts
    finally:
        await conn.close()
