"""Order creation in the fast lane (PostgreSQL): what a box office or a partner's shop sends
at a sale opening, past the framework and written in one database call per batch.

The lane runs the general path's own checks and builders (``drafts.check_positions``,
``validity.windows``, ``pricing.price_order``, ``rows.build``) against the worker's copy of the
catalog (``orders/catalog.py``), and hands the rows to ``pg_temp.admit_place_orders``
(``orders/lane_sql.py``), which takes the quota and writes them; concurrent orders of one event
share a call (``kit/lanes/batching``). It answers 201 with the order rendered from its rows as the
detail renders it, and 400 when the quota is short or a product has none (the errors the
general path gives).

Everything else it declines before anything is written, and the request takes the general
path, which has every rule and every message: invalid input of any kind, simulations, orders
that send mail, vouchers, seats (or a seating plan), memberships, products that need a voucher,
orders whose hooks have work to do (``hooks.all_idle``), quotas with special rules, a catalog
changed since the copy was made, a customer that does not exist, a secret already taken.
``tests/orders/test_lane.py`` runs every case through both paths and compares answers and rows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import asyncpg
import orjson
from pydantic import ValidationError
from starlette.responses import Response

from admit.db import utcnow
from admit.kit.http.context import EventAccess, EventContext, lane_context, public_base_url
from admit.kit.http.errors import BUSY_SQLSTATES, FieldErrors
from admit.kit.http.responses import JSONResponse
from admit.kit.idempotency.lane import lane_write
from admit.kit.lanes import fastread
from admit.kit.lanes.batching import Coalescer
from admit.kit.lanes.fastlane import LaneRequest
from admit.orders import codes, hooks, order_fields, validity
from admit.orders.catalog import Catalog, cache
from admit.orders.created import created_body
from admit.orders.downloads_field import event_api_base
from admit.orders.drafts import Draft, ProductKey, check_positions
from admit.orders.filters import View
from admit.orders.lane_sql import CALL, function_sql, key_order
from admit.orders.pricing import Line, needs_discounts, price_order
from admit.orders.quota import no_quota_message, not_enough_message
from admit.orders.rows import NewOrder, Written, answer_row, build
from admit.orders.schemas import OrderIn
from admit.quotas.availability import quota_busy
from admit.tickets.secrets import generator as secret_generator

WRITE = "event.orders:write"
_ACCESS = EventAccess(WRITE)
_FIELDS = frozenset(OrderIn.model_fields)
CODE_CANDIDATES = 3  # codes offered per order; the call takes the first one still free
_VIEW = View()

fastread.connection_setup.append(function_sql)


def _may_take(raw: dict[str, Any]) -> bool:
    """What the body alone rules out (before validating it)."""
    if not raw.keys() <= _FIELDS or raw.get("simulate") or raw.get("send_email"):
        return False
    positions = raw.get("positions")
    if not isinstance(positions, list):
        return False
    for position in positions:
        if not isinstance(position, dict):
            return False
        if position.get("voucher") or position.get("seat"):
            return False
        if position.get("used_membership") is not None:
            return False
    return True


def _takes(event: Any, drafts: list[Draft]) -> bool:
    """What the checked positions rule out: seats, memberships, products only a voucher
    sells (the general path's rules for those need the database)."""
    if not event.has_subevents and event.seating_plan is not None:
        return False
    for draft in drafts:
        line = draft.line
        assert line is not None
        item, variation = line.item, line.variation
        if line.subevent is not None and line.subevent.seating_plan is not None:
            return False
        if item.require_membership or item.require_voucher or item.hide_without_voucher:
            return False
        if variation is not None and variation.hide_without_voucher:
            return False
    return True


async def create_order(request: LaneRequest) -> Response | None:
    """The lane handler of ``POST …/orders/``; None for whatever it leaves to the general path."""
    raw = request.json_object()
    if raw is None or not _may_take(raw):
        return None
    try:
        data = OrderIn.model_validate(raw)
    except ValidationError:
        return None
    async with lane_context(request.scope, _ACCESS, request.params) as ctx:
        if ctx is None:
            return None
        assert isinstance(ctx, EventContext)
        return await lane_write(request.scope, ctx.session, lambda: _place(ctx, data))


@dataclass
class _Pending:
    """One order waiting for its batch."""

    new: NewOrder
    data: OrderIn
    catalog: Catalog
    guards: list[int]
    codes: list[str] = field(
        default_factory=lambda: codes.random_strings(
            codes.CODE_ALPHABET, codes.CODE_LENGTH, CODE_CANDIDATES
        )
    )

    # What other callers add to the order's entry of the call (``lane_sql``: a shop
    # checkout's ``cart``, its ``mail`` and ``job``).
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def secrets(self) -> list[str]:
        return [p.row["secret"] for p in self.new.positions]

    def demand(self) -> Counter[ProductKey]:
        return Counter(p.key for p in self.new.positions)

    def payload(self, key_numbers: dict[ProductKey, int]) -> dict[str, Any]:
        new = self.new
        written = new.write_order()
        place = {p.positionid: n for n, p in enumerate(written, start=1)}
        demand = self.demand()
        return {
            "stamp": self.catalog.stamp.isoformat(),
            "discounts": self.catalog.discount_print,
            "customer": self.data.customer,
            "codes": self.codes,
            "secrets": self.secrets,
            "force": self.data.force,
            "dk": [key_numbers[k] for k in demand],
            "dn": list(demand.values()),
            "order": new.order,
            "positions": [
                {"row": p.row, "positionid": p.positionid, "addon_to": p.addon_to} for p in written
            ],
            "answers": [
                {
                    "pos": place[p.positionid],
                    "row": answer_row(a),
                    "options": [o.id for o in a.options],
                }
                for p in new.positions
                for a in p.answers
            ],
            "fees": new.fees,
            "payment": new.payment,
            "actions": new.actions,
            "guards": self.guards,
            **self.extra,
        }


# (pool, event id, organizer id): what the orders of one batch share.
_Key = tuple[Any, int, int]
# ("done" | "sold_out" | "no_quota" | "declined" | "stale" | "busy", the result row)
_Outcome = tuple[str, Any]


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


async def _write(key: _Key, batch: list[_Pending]) -> list[_Outcome]:
    """One call for a batch (see ``lane_sql``)."""
    pool, event_id, organizer_id = key
    products = key_order([k for pending in batch for k in pending.demand()])
    numbers = {k: n for n, k in enumerate(products, start=1)}
    orders = orjson.dumps([p.payload(numbers) for p in batch], default=_json_default)
    try:
        rows = await pool.fetch(
            CALL,
            event_id,
            organizer_id,
            utcnow(),
            [k[0] for k in products],
            [k[1] for k in products],
            [k[2] for k in products],
            [secret for pending in batch for secret in pending.secrets],
            [code for pending in batch for code in pending.codes],
            orjson.Fragment(orders),
        )
    except asyncpg.PostgresError as exc:
        # Nothing was written. A lock timeout is answered as the general path would; any
        # other problem is left to the general path to meet (and report) on its own.
        kind = "busy" if exc.sqlstate in BUSY_SQLSTATES else "declined"
        return [(kind, None)] * len(batch)
    return [(row["r_outcome"], (row, products)) for row in rows]


_orders: Coalescer[_Key, _Pending, _Outcome] = Coalescer(_write)
PendingOrder = _Pending


# The shop's checkouts (``shop/checkout_lane.py``) batch apart: a batch of them takes no
# quota lock (``lane_sql``), which one order of this lane in it would make it take.
_checkouts: Coalescer[_Key, _Pending, _Outcome] = Coalescer(_write)


async def submit(pool: Any, event: Any, pending: _Pending) -> _Outcome:
    """Writes ``pending`` in the event's next batched call (of shop checkouts: those with a
    ``cart``)."""
    queue = _checkouts if "cart" in pending.extra else _orders
    return await queue.submit((pool, event.id, event.organizer_id), pending)


async def _place(ctx: EventContext, data: OrderIn) -> Response | None:
    session = ctx.session
    # The answer carries links: a Host they may not be built from is refused (400) before
    # anything is written, never after.
    base = public_base_url(ctx.request)
    copy = await cache.get(session, ctx.event)
    if copy is None:
        return None
    await cache.subevents(session, copy, data.positions)
    event = copy.event
    now = utcnow()
    try:
        order_fields.check_create(data)
        drafts = check_positions(event, data.positions, copy.refs())
    except FieldErrors:
        return None
    if not _takes(event, drafts) or not secret_generator.ready(event):
        return None  # (a signed event's key not yet in this process: the general path loads it)
    lines: list[Line] = [d.line for d in drafts]  # type: ignore[misc]
    windows = validity.windows(event, drafts, now)
    testmode = event.testmode if data.testmode is None else data.testmode
    discounts = copy.discounts if needs_discounts(lines) else []
    try:
        priced = price_order(event, data, lines, copy.rules, discounts, now)
    except FieldErrors:
        return None
    new = build(
        event,
        data,
        drafts,
        priced,
        windows=windows,
        memberships={},
        uses=[None] * len(drafts),
        customer_id=None,  # looked up by the database call
        testmode=testmode,
        now=now,
    )
    row = {**new.order, "customer_id": 0 if data.customer else None}
    guards = hooks.guards_for(event, [ln.item for ln in lines], row)
    if guards is None:
        return None
    pool = await session.info["fast"].pool()
    kind, result = await submit(pool, event, _Pending(new, data, copy, guards))
    if kind == "stale":
        cache.forget(event.id, copy.stamp)
        return None
    if kind == "busy":
        raise quota_busy()
    if kind in ("sold_out", "no_quota"):
        raise _quota_errors(kind, result, new, lines)
    if kind != "done":
        return None
    done = written(new, result[0])
    if data.customer:
        new.customer_identifier = data.customer
    body = await created_body(
        session,
        new,
        done,
        event_slug=event.slug,
        url_base=f"{base}/{ctx.organizer_slug}/{event.slug}/",
        api_base=event_api_base(base, ctx.organizer_slug, event.slug),
        view=_VIEW,
    )
    return JSONResponse(body, status_code=201)


def written(new: NewOrder, row: Any) -> Written:
    ids = {p.positionid: i for p, i in zip(new.write_order(), row["r_position_ids"], strict=True)}
    answers = iter(row["r_answer_ids"])
    new.order["code"] = row["r_code"]
    new.order["last_modified"] = row["r_last_modified"]
    return Written(
        order_id=row["r_order_id"],
        code=row["r_code"],
        position_ids=[ids[p.positionid] for p in new.positions],
        answer_ids=[[next(answers) for _ in p.answers] for p in new.positions],
        fee_ids=list(row["r_fee_ids"]),
        payment_id=row["r_payment_id"],
    )


def _quota_errors(kind: str, result: Any, new: NewOrder, lines: list[Line]) -> FieldErrors:
    """The general path's per-position errors (``orders/quota.py``)."""
    row, products = result
    bad = {products[n - 1] for n in row["r_bad_keys"]}
    if kind == "no_quota":
        errors = [
            {"item": [no_quota_message(line)]} if p.key in bad else {}
            for p, line in zip(new.positions, lines, strict=True)
        ]
    else:
        message = not_enough_message(row["r_quota_name"])
        errors = [{"item": [message]} if p.key in bad else {} for p in new.positions]
    return FieldErrors({"positions": errors})
