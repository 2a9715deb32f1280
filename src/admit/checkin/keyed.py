"""Keyed first entries at the doors: the scan's own statement writes its idempotency key.

A scanner that lost an answer sends the scan again with the same ``X-Idempotency-Key``, and
the key's answer must commit together with the entry. The lanes' general way for that, a
group transaction (``kit/idempotency/lane``), costs a claim statement before the scan and a
closing round trip after it, and a worker runs one group at a time: keyed scans ran at half
the rate of plain ones. A sale avoids it by rendering its answer before its statement
(``kit/idempotency/inline``); a redeem cannot, since its answer is made of the lookup that the
same statement does.

So the statement keeps the answer as its *recipe* instead: the lookup row (as ``json``,
whose text comes back as it was), the entry written (id, time, device and gate) and the
request's JSON body. ``fastpath.keyed_statement_sql`` writes the key's row with that recipe
and the entry together, and only both. The answer sent is rendered from the lookup row the
statement returned, by :meth:`Redeem.admitted <admit.checkin.redeem.Redeem.admitted>`; a
replay restores the same row from the recipe, typed as the statement typed it
(``kit/resources/json_record``), and renders it with the same method,
so the two answers are the same bytes. Rendering reads nothing else: the entry's answer
depends on the lookup row, the scan and the request alone.

Scans this does not take, and go the general way with their key (claimed, then a group):
every scan other than a plain first entry the statement admits, including one whose key is
taken (the general way answers it with the key's replay or 409).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import asyncpg
import orjson
from pydantic import ValidationError
from starlette.responses import Response
from starlette.types import Scope

from admit.checkin import fastpath
from admit.checkin.redeem import Redeem, Scanner
from admit.checkin.rows import parse
from admit.checkin.schemas import RedeemIn
from admit.db import Database
from admit.kit.idempotency import store
from admit.kit.idempotency.inline import stored_inline
from admit.kit.lanes.fastread import FastReader
from admit.kit.resources.json_record import column_definitions

# The SELECT that restores a recipe's lookup row and scan, and this code's recipe version.
_restore: dict[str, str] = {}
_SCAN = "s(id bigint, at timestamptz, device integer, number integer, gate integer)"


async def first_entry(redeem: Redeem, scope: Scope, body: dict[str, Any]) -> Response | None:
    """The answer to a keyed scan (``body``: its JSON object) that the statement admitted,
    its key stored with the entry; None when the scan goes the general way (see the
    module)."""
    request: store.Request | None = scope.get(store.UNCLAIMED)
    if request is None or not redeem.fast_entry():
        return None
    hours = scope["app"].state.settings.idempotency_hours
    expires = redeem.now + dt.timedelta(hours=hours)
    keyed = fastpath.Keyed(request, expires, orjson.dumps(body).decode())
    try:
        found, admitted = await redeem.scan_fast(keyed)
    except asyncpg.PostgresError:  # e.g. the ticket's first entry came from elsewhere
        return None
    if admitted is None:
        return None
    # The statement admits on the one list named, in an event the caller may scan: the
    # checks of ``redeem.check_lists`` hold, and the replay does not repeat them either.
    stored_inline(scope, request, redeem.now)
    return await redeem.admitted(found[0], admitted)


async def _restore_sql(fast: FastReader, pool: asyncpg.Pool) -> str:
    """``json_to_record`` of the recipe's lookup row, typed as the scan statement types its
    ``found`` rows (its columns but the last, the entry's id)."""
    sql = _restore.get("sql")
    if sql is None:
        statement = fastpath.statement_sql(fast.engine.dialect)
        columns = ", ".join((await column_definitions(pool, statement))[:-1])
        _restore["version"] = fastpath.recipe_version(fast.engine.dialect)
        sql = _restore["sql"] = (
            "SELECT k.recipe ->> 'v', f.*, s.*, k.recipe ->> 'request' FROM idempotency_keys k, "
            f"json_to_record(k.recipe -> 'found') AS f({columns}), "
            f"json_to_record(k.recipe -> 'scan') AS {_SCAN} "
            "WHERE k.credential = $1 AND k.key = $2 AND k.status IS NOT NULL "
            f"AND k.recipe ->> 'kind' = '{fastpath.RECIPE}'"
        )
    return sql


async def replay(db: Database, request: store.Request) -> store.Answer | None:
    """The answer a keyed first entry's recipe renders to (None: the row is gone). A recipe
    written by code with another lookup is not rendered (``fastpath.recipe_version``): its
    row would not come back as that code returned it."""
    pool = await db.fast.pool()
    sql = await _restore_sql(db.fast, pool)
    try:
        row = await pool.fetchrow(sql, request.credential, request.key)
    except asyncpg.DataError:  # a recipe of other columns than the lookup's, its types wrong
        return store.UNREPLAYABLE
    if row is None:
        return None
    version, *values = row.values()
    if version != _restore["version"]:
        return store.UNREPLAYABLE
    found = parse(values[:-7])  # the lookup row; then scan_n, the scan's five, the body
    new_id, at, device, number, gate, body = values[-6:]
    try:
        data = RedeemIn.model_validate(orjson.loads(body))
    except ValidationError:  # a request this version no longer takes as it was
        return store.UNREPLAYABLE
    redeem = Redeem.recorded(data, Scanner(device, number, gate), data.datetime or at)
    response = await redeem.admitted(found, new_id)
    return store.Answer.of(response.status_code, response.raw_headers, bytes(response.body))


store.RECIPES[fastpath.RECIPE] = replay
