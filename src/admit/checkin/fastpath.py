"""First entries in one statement per batch (PostgreSQL): the lookup, and the check-in when
the ticket plainly may enter.

Most scans at the door are first entries of paid tickets. For those, the lookup of
``lookup.py`` and the insert of ``store.py`` run as one statement: the lookup is a lateral
subquery per scan, and an ``INSERT ... SELECT`` from it writes the check-in (``seq`` 1) only
when every condition below holds; the statement returns the lookup rows and the new id, if
any. The conditions are a strict subset of what ``decide.py`` admits (first entry, paid
order, product and date on the list, no block, within validity, no rules, no open check-in
questions or scanner without question support, caller allowed on the event, no earlier scan
on the list); every other scan gets ``None`` back and goes through the general path with the
rows already read. A concurrent first entry of the same ticket (another process) makes the
insert do nothing (``seq`` taken), and the general path then finds the winner's entry.

Scans that queue in a process while its previous statement runs go together into the next
one (``kit/batching.Coalescer``), per list and scanning permission: at the doors one
statement and one commit serve many scanners. Two scans of one secret never share a
statement (the second would not see the first's entry); the repeat goes in the next one and
is answered as a second scan. A successful redeem thus costs two statements at most:
authentication and this one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg

from admit.checkin import lookup
from admit.checkin.rows import Found, parse
from admit.kit.batching import Coalescer
from admit.kit.fastread import FastReader
from admit.kit.plpgsql import embed


@dataclass(frozen=True)
class Scan:
    """One first-entry attempt, as the statement takes it."""

    secret: str
    nonce: str | None
    at: dt.datetime
    created: dt.datetime
    device: int | None
    number: int | None
    gate: int | None
    source: str
    questions: bool


# The statement takes each field of Scan as an array, one element per scan of the batch.
_ARRAY_TYPES = {
    "secret": "varchar",
    "nonce": "varchar",
    "at": "timestamptz",
    "created": "timestamptz",
    "device": "integer",
    "number": "integer",
    "gate": "integer",
    "source": "varchar",
    "questions": "boolean",
}
assert list(_ARRAY_TYPES) == list(Scan.__dataclass_fields__)


def statement_sql(dialect: Any) -> str:
    """The batch statement: ``$1`` organizer, ``$2`` list, ``$3`` events the caller may scan
    (NULL: all), then one array per field of :class:`Scan`. Each output row is a lookup row
    (``lookup.py``'s columns), the scan's 1-based index in the batch, and the id of the entry
    written for it or NULL."""
    arrays = ", ".join(f"${i}::{t}[]" for i, t in enumerate(_ARRAY_TYPES.values(), start=4))
    names = ", ".join(_ARRAY_TYPES)
    base = embed(
        lookup.statement("postgresql", 1),
        dialect,
        {"organizer": "$1", "list_0": "$2", "secret": "r.secret", "nonce": "r.nonce"},
    )
    return f"""WITH r AS (
  SELECT * FROM unnest({arrays}) WITH ORDINALITY AS r({names}, n)
),
found AS (
  SELECT f.*, r.n AS scan_n FROM r CROSS JOIN LATERAL ({base}) f
),
ins AS (
  INSERT INTO checkins (event_id, list_id, position_id, seq, type, datetime, created,
      last_modified, successful, auto_checked_in, forced, nonce, device_id, device_number, gate_id,
      raw_barcode, raw_source_type)
  SELECT f.l_event_id, f.l_id, f.p_id, 1, 'entry', r.at, r.created, now(), true, false, false,
      r.nonce, r.device, r.number, r.gate, r.secret, r.source
  FROM found f JOIN r ON r.n = f.scan_n
  WHERE f.p_id IS NOT NULL
    AND ($3::int[] IS NULL OR f.l_event_id = ANY($3::int[]))
    AND (f.l_all_products OR f.on_list)
    AND (f.l_subevent_id IS NULL OR f.l_subevent_id = f.p_subevent_id)
    AND NOT f.p_canceled AND f.o_status = 'p'
    AND (f.p_blocked IS NULL OR jsonb_typeof(f.p_blocked) = 'null'
         OR f.p_blocked = '[]'::jsonb)
    AND (f.p_valid_from IS NULL OR f.p_valid_from <= r.at)
    AND (f.p_valid_until IS NULL OR f.p_valid_until >= r.at)
    AND (f.l_rules IS NULL OR f.l_rules = '{{}}'::jsonb)
    AND (f.missing = 0 OR NOT r.questions)
    AND f.scans IS NULL
  ON CONFLICT (position_id, list_id, seq) DO NOTHING
  RETURNING id, position_id
)
SELECT found.*, ins.id FROM found LEFT JOIN ins ON ins.position_id = found.p_id"""


# The batch's fast reader (by id), organizer, list and the events the caller may scan.
Key = tuple[int, int, int, tuple[int, ...] | None]
Outcome = tuple[list[Found], int | None]
_readers: dict[int, FastReader] = {}
_compiled: dict[int, str] = {}


def _rounds(scans: list[Scan]) -> list[list[int]]:
    """The scans' indices by statement: the n-th scan of a secret goes in the n-th."""
    rounds: list[list[int]] = []
    seen: dict[str, int] = {}
    for i, scan in enumerate(scans):
        n = seen[scan.secret] = seen.get(scan.secret, -1) + 1
        if n == len(rounds):
            rounds.append([])
        rounds[n].append(i)
    return rounds


async def _statement(key: Key, scans: list[Scan]) -> list[Outcome]:
    """One statement for scans of distinct secrets."""
    reader, organizer_id, list_id, allowed = key
    fast = _readers[reader]
    sql = _compiled.get(reader)
    if sql is None:
        sql = _compiled[reader] = statement_sql(fast.engine.dialect)
    columns = [[getattr(scan, name) for scan in scans] for name in _ARRAY_TYPES]
    events = list(allowed) if allowed is not None else None
    pool = await fast.pool()  # the fast path's native pool
    fast.executed += 1
    rows = await pool.fetch(sql, organizer_id, list_id, events, *columns)
    found: list[list[Found]] = [[] for _ in scans]
    admitted: list[int | None] = [None] * len(scans)
    for row in rows:
        values = tuple(row.values())
        n = values[-2] - 1  # the scan's index, 1-based
        found[n].append(parse(values[:-2]))
        admitted[n] = admitted[n] or values[-1]
    return list(zip(found, admitted, strict=True))


async def _run(key: Key, scans: list[Scan]) -> list[Outcome | Exception]:
    """Every scan of a batch. When a statement fails, its scans run one by one, so that one
    scan the database refuses costs the others nothing."""
    results: list[Outcome | Exception] = [([], None)] * len(scans)
    for indices in _rounds(scans):
        group = [scans[i] for i in indices]
        outcomes: list[Outcome | Exception]
        try:
            outcomes = list(await _statement(key, group))
        except asyncpg.PostgresError as exc:
            outcomes = [exc] if len(group) == 1 else [await _alone(key, s) for s in group]
        for i, outcome in zip(indices, outcomes, strict=True):
            results[i] = outcome
    return results


async def _alone(key: Key, scan: Scan) -> Outcome | Exception:
    try:
        return (await _statement(key, [scan]))[0]
    except asyncpg.PostgresError as exc:
        return exc


_batches: Coalescer[Key, Scan, Outcome | Exception] = Coalescer(_run)


async def find_and_admit(
    fast: FastReader,
    *,
    organizer_id: int,
    list_id: int,
    allowed_events: Sequence[int] | None,
    scan: Scan,
) -> Outcome:
    """The lookup rows of one list and the id of the entry written, or None."""
    _readers[id(fast)] = fast
    allowed = tuple(allowed_events) if allowed_events is not None else None
    outcome = await _batches.submit((id(fast), organizer_id, list_id, allowed), scan)
    if isinstance(outcome, Exception):
        raise outcome
    return outcome
