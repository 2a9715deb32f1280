"""A ticket's first entry in one statement (PostgreSQL): the lookup, and the check-in when
the ticket plainly may enter.

Most scans at the door are first entries of paid tickets. For those, the lookup of
``lookup.py`` and the insert of ``store.py`` run as one statement: the lookup is a CTE, and
an ``INSERT ... SELECT`` from it writes the check-in (``seq`` 1) only when every condition
below holds; the statement returns the lookup rows and the new id, if any. The conditions
are a strict subset of what ``decide.py`` admits (first entry, paid order, product and date
on the list, no block, within validity, no rules, no open check-in questions or scanner
without question support, caller allowed on the event, no earlier scan on the list); every
other scan gets ``None`` back and goes through the general path with the rows already read.
A concurrent first entry of the same ticket makes the insert do nothing (``seq`` taken), and
the general path then finds the winner's entry. A successful redeem thus costs two
statements: authentication and this one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from admit.checkin import lookup
from admit.checkin.rows import Found, parse

_EXTRA = ("fast", "allowed", "when", "now", "device", "number", "gate", "source", "questions")
_compiled: tuple[str, tuple[str, ...]] | None = None


def _sql(session: AsyncSession) -> tuple[str, tuple[str, ...]]:
    global _compiled
    if _compiled is None:
        fast = session.info["fast"]
        base, names = fast.compile(lookup.statement("postgresql", 1))  # compiled-SQL cache
        n = len(names)
        p = {name: f"${n + i}" for i, name in enumerate(_EXTRA, start=1)}
        nonce = f"${names.index('nonce') + 1}"
        secret = f"${names.index('secret') + 1}"
        sql = f"""WITH found AS ({base}),
ins AS (
  INSERT INTO checkins (event_id, list_id, position_id, seq, type, datetime, created,
      successful, auto_checked_in, forced, nonce, device_id, device_number, gate_id,
      raw_barcode, raw_source_type)
  SELECT f.l_event_id, f.l_id, f.p_id, 1, 'entry', {p["when"]}::timestamptz,
      {p["now"]}::timestamptz, true, false, false, {nonce}::varchar, {p["device"]}::int,
      {p["number"]}::int, {p["gate"]}::int, {secret}::varchar, {p["source"]}::varchar
  FROM found f
  WHERE {p["fast"]}::boolean AND f.p_id IS NOT NULL
    AND ({p["allowed"]}::int[] IS NULL OR f.l_event_id = ANY({p["allowed"]}::int[]))
    AND (f.l_all_products OR f.on_list)
    AND (f.l_subevent_id IS NULL OR f.l_subevent_id = f.p_subevent_id)
    AND NOT f.p_canceled AND f.o_status = 'p'
    AND (f.p_blocked IS NULL OR jsonb_typeof(f.p_blocked) = 'null'
         OR f.p_blocked = '[]'::jsonb)
    AND (f.p_valid_from IS NULL OR f.p_valid_from <= {p["when"]}::timestamptz)
    AND (f.p_valid_until IS NULL OR f.p_valid_until >= {p["when"]}::timestamptz)
    AND (f.l_rules IS NULL OR f.l_rules = '{{}}'::jsonb)
    AND (f.missing = 0 OR NOT {p["questions"]}::boolean)
    AND f.scans IS NULL
  ON CONFLICT (position_id, list_id, seq) DO NOTHING
  RETURNING id
)
SELECT found.*, (SELECT id FROM ins) FROM found"""
        _compiled = (sql, (*names, *_EXTRA))
    return _compiled


async def find_and_admit(
    session: AsyncSession,
    *,
    organizer_id: int,
    secret: str,
    list_id: int,
    nonce: str | None,
    allowed_events: Sequence[int] | None,
    when: dt.datetime,
    now: dt.datetime,
    device: tuple[int | None, int | None, int | None],
    source: str,
    questions_supported: bool,
) -> tuple[list[Found], int | None]:
    """The lookup rows of one list and the id of the entry written, or None."""
    sql, names = _sql(session)
    device_id, number, gate = device
    params: dict[str, Any] = {
        "organizer": organizer_id,
        "secret": secret,
        "nonce": nonce,
        "list_0": list_id,
        "fast": True,
        "allowed": list(allowed_events) if allowed_events is not None else None,
        "when": when,
        "now": now,
        "device": device_id,
        "number": number,
        "gate": gate,
        "source": source,
        "questions": questions_supported,
    }
    fast = session.info["fast"]
    pool = await fast.pool()  # the fast path's native pool
    fast.executed += 1
    rows = await pool.fetch(sql, *(params[n] for n in names))
    found = [parse(tuple(r.values())[:-1]) for r in rows]
    admitted = rows[0][-1] if rows else None
    return found, admitted
