"""A plain cart position in one database call (PostgreSQL): what a sale opening is made of.

The general path (``service.create``) locks the product's quotas, counts, inserts and updates
the sales ledger in separate statements, so the quota lock is held across several round trips
and the other requests' CPU slices in between; every sale of the product queues behind it.
Here the same steps run inside one PL/pgSQL function, built from the general path's own
statements (the quotas of a product with ``FOR UPDATE``, the ledger count, the cart insert,
the ledger upsert): the lock lives only inside PostgreSQL, for a fraction of a millisecond.

Only the plain case comes this way: one position without add-ons, bundled positions,
answers, seat or voucher, for a product whose quotas neither close when sold out nor release
after exit, in an event without quota-blocking vouchers and without a seating plan. The
function declines everything else before it writes (and the request then takes the general
path, which has every rule and every error message), so this path adds no rule of its own.
Every quota counter that reduces availability must be covered by the decline conditions:
``tests/carts/test_fastpath.py`` fails when a new one is registered.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import asyncpg
from pydantic import ValidationError
from sqlalchemy import bindparam, insert
from sqlalchemy.engine import Dialect
from starlette.responses import Response
from starlette.types import Scope

from admit.carts.planning import name_parts
from admit.carts.render import render
from admit.carts.schemas import CartPositionIn
from admit.carts.service import RESERVATION_TIME, new_cart_id
from admit.db import utcnow
from admit.events.plugins import SALES_CHANNELS
from admit.kit.http.context import EventAccess, EventContext, lane_context
from admit.kit.http.errors import BUSY_SQLSTATES, NON_FIELD
from admit.kit.http.responses import JSONResponse
from admit.kit.idempotency import inline as idempotency_inline
from admit.kit.idempotency.layer import settle
from admit.kit.idempotency.store import UNCLAIMED, Answer, Request
from admit.kit.lanes import fastread
from admit.kit.lanes.batching import Coalescer
from admit.kit.lanes.fastlane import LaneRequest
from admit.kit.lanes.plpgsql import embed, temp_function
from admit.models import CartPosition
from admit.quotas import ledger
from admit.quotas.availability import QUOTAS_OF, TAKEN, quota_busy, sold_out_message
from admit.vouchers.blocking import HELD_IN_QUOTA

WRITE = "event.orders:write"
# Counters of ``availability.blocking_counters`` this path accounts for: blocking vouchers
# by subtracting what they hold (``HELD_IN_QUOTA``), exited orders by declining.
COVERED_COUNTERS = frozenset({"blocking_vouchers", "exited_orders"})

# Top-level fields a plain request may carry; the nested ones must be empty.
_FIELDS = frozenset(CartPositionIn.model_fields)
_MUST_BE_EMPTY = ("addons", "bundled", "answers", "seat", "voucher")

# One call sells one product to a batch of requests: the product and the time are shared,
# the other columns come as arrays (the name parts as one JSON list), one element per request.
_SHARED = (
    ("event_id", "integer"),
    ("item_id", "integer"),
    ("variation_id", "integer"),
    ("subevent_id", "integer"),
    ("has_subevents", "boolean"),
    ("datetime", "timestamptz"),
)
_PER_REQUEST = (
    ("cart_id", "varchar[]"),
    ("expires", "timestamptz[]"),
    ("price", "numeric[]"),
    ("attendee_email", "varchar[]"),
    ("sales_channel", "varchar[]"),
    ("includes_tax", "boolean[]"),
    ("attendee_name_parts", "jsonb"),
)
# A keyed request's key and answer, written by the call with its position
# (``kit/idempotency/inline``); NULL for a request without a key.
_KEYED = tuple(zip(idempotency_inline.COLUMNS, idempotency_inline.TYPES, strict=True))
_NOT_PLAIN = {"voucher_id": "NULL", "addon_to_id": "NULL", "seat_id": "NULL", "is_bundled": "false"}
_ARGUMENT_COUNT = len(_SHARED) + len(_PER_REQUEST) + len(_KEYED)
CALL = (
    "SELECT outcome, positions, quota_name FROM pg_temp.admit_add_to_carts("
    + ", ".join(f"${n}" for n in range(1, _ARGUMENT_COUNT + 1))
    + ")"
)


def function_sql(dialect: Dialect) -> str:
    """``pg_temp.admit_add_to_carts``: for a batch of N requests for one product, outcome
    ``declined`` (nothing written: the general path takes them all) or ``done`` with one
    element of ``positions`` per request: the id of its new position; 0 when its
    idempotency key was taken (nothing written for it); NULL when the quota ``quota_name``
    was sold out before its turn. That is what N sales one after another would give."""
    arg = {name: f"p_{name}" for name, _ in (*_SHARED, *_PER_REQUEST, *_KEYED)}
    element = {name: f"p_{name}[i]" for name, _ in _PER_REQUEST}
    element["attendee_name_parts"] = "p_attendee_name_parts -> (i - 1)"
    quotas = {
        "event_id": arg["event_id"],
        "item_id": arg["item_id"],
        "variation_id": arg["variation_id"],
        "subevent_id": f"coalesce({arg['subevent_id']}, 0)",
    }
    columns = [c.key for c in CartPosition.__table__.columns]
    insert_sql = embed(
        insert(CartPosition).values({c: bindparam(c) for c in columns}),
        dialect,
        {"id": "v_id"}
        | {c: _NOT_PLAIN.get(c) or element.get(c) or arg[c] for c in columns if c != "id"},
    )
    ledger_sql = embed(
        ledger.upsert_statement(dialect.name),
        dialect,
        {
            "item_id": arg["item_id"],
            "variation_id": f"coalesce({arg['variation_id']}, 0)",
            "subevent_id": f"coalesce({arg['subevent_id']}, 0)",
            "pending": "0",
            "paid": "0",
            "carts": "v_sold",
        },
    )
    key_sql = embed(
        idempotency_inline.key_insert(),
        dialect,
        {
            **{name: f"p_{name}[i]" for name, _ in _KEYED},
            "value": "v_id",
            "key_created": "p_datetime",
        },
    )
    taken_sql = embed(
        TAKEN, dialect, {"quota_id": "v_quota", "subevent_id": "v_date", "now": "p_datetime"}
    )
    held_sql = embed(
        HELD_IN_QUOTA,
        dialect,
        {"event_id": "p_event_id", "quota_id": "v_quota", "now": "p_datetime"},
    )
    locked = {
        False: embed(QUOTAS_OF[(False, True)], dialect, quotas),
        True: embed(QUOTAS_OF[(True, True)], dialect, quotas),
    }
    body = f"""
outcome := 'declined';
-- The event and the references, as the general path checks them (it gives the errors).
IF NOT (
    EXISTS (
        SELECT FROM events WHERE id = p_event_id AND has_subevents = p_has_subevents
        AND (has_subevents OR seating_plan IS NULL))
    AND EXISTS (SELECT FROM items WHERE id = p_item_id AND event_id = p_event_id)
    AND CASE WHEN p_variation_id IS NULL
        THEN NOT EXISTS (SELECT FROM item_variations WHERE item_id = p_item_id)
        ELSE EXISTS (
            SELECT FROM item_variations WHERE id = p_variation_id AND item_id = p_item_id)
    END
    AND (NOT p_has_subevents OR EXISTS (
        SELECT FROM subevents
        WHERE id = p_subevent_id AND event_id = p_event_id AND seating_plan IS NULL))
) THEN
    RETURN;
END IF;
-- The product's quotas, locked in id order (the lock every sale takes).
IF p_variation_id IS NULL THEN
    SELECT array_agg(l.id) INTO v_ids FROM ({locked[False]}) AS l;
ELSE
    SELECT array_agg(l.id) INTO v_ids FROM ({locked[True]}) AS l;
END IF;
IF v_ids IS NULL THEN
    RETURN;
END IF;
-- Read after the lock. Quotas that close or release after exit: the general path counts
-- those. Blocking vouchers hold their units here as in the availability count.
v_room := cardinality(p_cart_id);
FOR q IN
    SELECT id, name, size, closed, subevent_id,
        release_after_exit OR close_when_sold_out AS special
    FROM quotas WHERE id = ANY(v_ids) ORDER BY id
LOOP
    IF q.special THEN
        RETURN;
    END IF;
    IF q.closed THEN
        v_left := 0;
    ELSIF q.size IS NULL THEN
        CONTINUE;
    ELSE
        v_quota := q.id;
        v_date := coalesce(q.subevent_id, 0);
        SELECT t.* INTO v_pending, v_paid, v_carts, v_stale FROM ({taken_sql}) AS t;
        SELECT coalesce(sum(h.held), 0) INTO v_held FROM ({held_sql}) AS h;
        v_left := greatest(0, q.size - (v_pending + v_paid + v_carts - v_stale) - v_held);
    END IF;
    -- The first quota in id order that runs out is the one the later requests hear of.
    IF v_left < v_room THEN
        v_room := v_left;
        quota_name := q.name;
    END IF;
END LOOP;
positions := array_fill(NULL::integer, ARRAY[cardinality(p_cart_id)]);
v_sold := 0;
FOR i IN 1 .. cardinality(p_cart_id) LOOP
    EXIT WHEN v_sold >= v_room;
    v_id := nextval(v_sequence);
    IF p_key_key[i] IS NOT NULL THEN
        {key_sql} INTO v_key;
        IF NOT FOUND THEN
            positions[i] := 0;
            CONTINUE;
        END IF;
    END IF;
    {insert_sql};
    positions[i] := v_id;
    v_sold := v_sold + 1;
END LOOP;
IF v_sold > 0 THEN
    {ledger_sql};
END IF;
outcome := 'done';
"""
    declare = """
q record;
v_ids integer[];
v_quota integer;
v_date integer;
v_pending bigint;
v_paid bigint;
v_carts bigint;
v_stale bigint;
v_left bigint;
v_held bigint;
v_room bigint;
v_sold bigint;
v_id integer;
v_key integer;
v_sequence regclass := pg_get_serial_sequence('cart_positions', 'id');
"""
    arguments = ", ".join(f"{arg[n]} {t}" for n, t in (*_SHARED, *_PER_REQUEST, *_KEYED)) + (
        ", OUT outcome text, OUT positions integer[], OUT quota_name text"
    )
    return temp_function("admit_add_to_carts", arguments, "record", declare, body)


fastread.connection_setup.append(function_sql)


def _plain(request: LaneRequest) -> CartPositionIn | None:
    """The request's position when it is a plain one, else None."""
    raw = request.json_object()
    if raw is None or not raw.keys() <= _FIELDS:
        return None
    if any(raw.get(name) for name in _MUST_BE_EMPTY):
        return None
    try:
        return CartPositionIn.model_validate(raw)
    except ValidationError:
        return None


# The pool, and the product as (event id, item, variation, subevent, has_subevents): what the
# requests of one batch share.
Product = tuple[asyncpg.Pool, int, int, int | None, int | None, bool]
# What a request gets: ("created", position id), ("sold_out", quota name), ("taken", None)
# (its idempotency key was), ("declined", None) or ("busy", None).
Outcome = tuple[str, Any]


async def _sell(product: Product, rows: list[dict[str, Any]]) -> list[Outcome]:
    """One call for a batch of requests for one product (see :func:`function_sql`)."""
    pool, *shared = product
    now = utcnow()
    for row in rows:
        row["datetime"] = now
    columns = [[row[name] for row in rows] for name, _ in _PER_REQUEST[:-1]]
    parts = [row["attendee_name_parts"] for row in rows]
    keyed = [_keyed_columns(row) for row in rows]
    keys = [list(column) for column in zip(*keyed, strict=True)]
    try:
        outcome, positions, quota_name = await pool.fetchrow(
            CALL, *shared, now, *columns, parts, *keys
        )
    except asyncpg.PostgresError as exc:
        # Nothing was written. A lock timeout is answered as the general path would; any
        # other problem is left to the general path to meet (and report) on its own.
        kind = "busy" if exc.sqlstate in BUSY_SQLSTATES else "declined"
        return [(kind, None)] * len(rows)
    if outcome != "done":
        return [("declined", None)] * len(rows)
    return [
        ("sold_out", quota_name) if pk is None else ("taken", None) if pk == 0 else ("created", pk)
        for pk in positions
    ]


_sales: Coalescer[Product, dict[str, Any], Outcome] = Coalescer(_sell)
_NO_KEY = (None,) * len(_KEYED)


def _keyed_columns(row: dict[str, Any]) -> tuple[object, ...]:
    """The row's values for the key arrays: its answer rendered now that the batch's time
    (the position's ``datetime``) is known, or NULLs."""
    keyed: tuple[Request, float] | None = row.get("keyed")
    if keyed is None:
        return _NO_KEY
    request, hours = keyed
    row["inline"] = idempotency_inline.prepare(request, lambda pk: _created(row, pk), hours)
    return row["inline"].columns()


def _created(row: dict[str, Any], position_id: int) -> JSONResponse:
    position = SimpleNamespace(
        id=position_id, voucher_id=None, addon_to_id=None, is_bundled=False, seat_id=None, **row
    )
    return JSONResponse(render(position, []), status_code=201)  # type: ignore[arg-type]


_ACCESS = EventAccess(WRITE)


async def sell_plain(session: Any, event: Any, data: CartPositionIn, cart_id: str) -> Outcome:
    """One plain position for a caller that checked its own rules first (the shop's cart),
    through the same batched call: ("created", id), ("sold_out", quota name), ("busy",
    None), or ("declined", None) when the caller is to take the general path (which it must
    for anything but a position without voucher, add-ons, bundled positions, answers and
    seat; on SQLite; inside a transaction that wrote already)."""
    fast = session.info["fast"]
    if not fast.native or session.new or session.dirty or session.deleted:
        return ("declined", None)
    row = {
        "event_id": event.id,
        "cart_id": cart_id,
        "datetime": utcnow(),
        "expires": data.expires,
        "item_id": data.item,
        "variation_id": data.variation,
        "subevent_id": data.subevent,
        "price": data.price,
        "attendee_email": None,
        "sales_channel": data.sales_channel,
        "includes_tax": data.includes_tax is not False,
        "attendee_name_parts": {},
        "keyed": None,
    }
    pool = await fast.pool()
    product = (pool, event.id, data.item, data.variation, data.subevent, event.has_subevents)
    return await _sales.submit(product, row)


async def create_cart(request: LaneRequest) -> JSONResponse | None:
    """The lane handler of ``POST …/cartpositions/``; None for anything but the plain case."""
    data = _plain(request)
    if data is None:
        return None
    async with lane_context(request.scope, _ACCESS, request.params) as ctx:
        if ctx is None:
            return None
        assert isinstance(ctx, EventContext)
        keyed = None
        unclaimed: Request | None = request.scope.get(UNCLAIMED)
        if unclaimed is not None:
            keyed = (unclaimed, request.scope["app"].state.settings.idempotency_hours)
        return await _sell_one(ctx, data, keyed, request.scope)


async def _sell_one(
    ctx: EventContext, data: CartPositionIn, keyed: tuple[Request, float] | None, scope: Scope
) -> Response | None:
    event = ctx.event
    now = utcnow()
    problems: dict[str, Any] = {}
    parts = name_parts(data, problems)
    if (
        problems
        or (data.expires is not None and data.expires <= now)
        or data.sales_channel not in SALES_CHANNELS
        or event.has_subevents != (data.subevent is not None)
        or (not event.has_subevents and event.seating_plan is not None)
    ):
        return None
    row = {
        "event_id": event.id,
        "cart_id": data.cart_id or new_cart_id(),
        "datetime": now,
        "expires": data.expires or now + RESERVATION_TIME,
        "item_id": data.item,
        "variation_id": data.variation,
        "subevent_id": data.subevent,
        "price": data.price,
        "attendee_email": data.attendee_email,
        "sales_channel": data.sales_channel,
        "includes_tax": data.includes_tax is not False,
        "attendee_name_parts": parts,
        "keyed": keyed,
    }
    pool = await ctx.session.info["fast"].pool()
    product = (pool, event.id, data.item, data.variation, data.subevent, event.has_subevents)
    kind, value = await _sales.submit(product, row)
    inline: idempotency_inline.Inline | None = row.get("inline")
    if kind == "created":
        return inline.response(scope, value, now) if inline else _created(row, value)
    if inline is not None:  # nothing was written: the key is settled as for any request
        settled = await settle(scope)
        if isinstance(settled, Answer):
            return settled.response()
    if kind == "sold_out":
        return JSONResponse({NON_FIELD: [sold_out_message(value, 0)]}, status_code=400)
    if kind == "busy":
        raise quota_busy()
    return None  # declined (or a taken key whose row went meanwhile): the general path
