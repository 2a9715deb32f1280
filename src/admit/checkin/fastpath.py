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
one (``kit/lanes/batching.Coalescer``), per list and scanning permission: at the doors one
statement and one commit serve many scanners. Two scans of one secret never share a
statement (the second would not see the first's entry); the repeat goes in the next one and
is answered as a second scan. A successful redeem thus costs two statements at most:
authentication and this one.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg

from admit.checkin import lookup
from admit.checkin.rows import Found, parse
from admit.kit.idempotency.store import Request, pg_takeover
from admit.kit.lanes.batching import Coalescer
from admit.kit.lanes.fastread import FastReader
from admit.kit.lanes.plpgsql import embed


@dataclass(frozen=True)
class Keyed:
    """A keyed scan's idempotency key, its row kept until ``expires``, and the request's
    JSON ``body`` (the recipe's ``request``): the key's row is written with the entry, its
    answer kept as a recipe (``keyed.py``)."""

    request: Request
    expires: dt.datetime
    body: str

    def values(self) -> tuple[object, ...]:
        """This key's values for :data:`_KEY_TYPES`."""
        key = tuple(getattr(self.request, name) for name in Request.__dataclass_fields__)
        return (*key, self.expires, self.body)


# The keyed statement takes each of :meth:`Keyed.values` as an array, one element per scan.
_KEY_TYPES = {
    **{name: "varchar" for name in Request.__dataclass_fields__},
    "expires": "timestamptz",
    "body": "text",
}
_NO_KEY = (None,) * len(_KEY_TYPES)


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
    keyed: Keyed | None = None


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
assert list(_ARRAY_TYPES) == [name for name in Scan.__dataclass_fields__ if name != "keyed"]
# The kind of recipe a keyed scan's answer is kept as (``keyed.py`` renders it).
RECIPE = "redeem"


# Which scans the statement admits: a strict subset of what ``decide.py`` admits.
_ADMISSIBLE = """f.p_id IS NOT NULL
    AND ($3::int[] IS NULL OR f.l_event_id = ANY($3::int[]))
    AND (f.l_all_products OR f.on_list)
    AND (f.l_subevent_id IS NULL OR f.l_subevent_id = f.p_subevent_id)
    AND NOT f.p_canceled AND f.o_status = 'p'
    AND (f.p_blocked IS NULL OR jsonb_typeof(f.p_blocked) = 'null'
         OR f.p_blocked = '[]'::jsonb)
    AND (f.p_valid_from IS NULL OR f.p_valid_from <= r.at)
    AND (f.p_valid_until IS NULL OR f.p_valid_until >= r.at)
    AND (f.l_rules IS NULL OR f.l_rules = '{}'::jsonb)
    AND (f.missing = 0 OR NOT r.questions)
    AND f.scans IS NULL"""
_CHECKIN_COLUMNS = """event_id, list_id, position_id, seq, type, datetime, created,
      last_modified, successful, auto_checked_in, forced, nonce, device_id, device_number, gate_id,
      raw_barcode, raw_source_type"""
_CHECKIN_VALUES = """f.l_event_id, f.l_id, f.p_id, 1, 'entry', r.at, r.created, now(), true, false,
      false, r.nonce, r.device, r.number, r.gate, r.secret, r.source"""


def _found_sql(dialect: Any, types: dict[str, str]) -> str:
    """The statement's first two parts: ``r``, the scans (one array per field of ``types``
    from ``$4`` on), and ``found``, each scan's lookup rows with its index ``scan_n``."""
    arrays = ", ".join(f"${i}::{t}[]" for i, t in enumerate(types.values(), start=4))
    base = embed(
        lookup.statement("postgresql", 1),
        dialect,
        {"organizer": "$1", "list_0": "$2", "secret": "r.secret", "nonce": "r.nonce"},
    )
    return f"""WITH r AS (
  SELECT * FROM unnest({arrays}) WITH ORDINALITY AS r({", ".join(types)}, n)
),
found AS (
  SELECT f.*, r.n AS scan_n FROM r CROSS JOIN LATERAL ({base}) f
)"""


def statement_sql(dialect: Any) -> str:
    """The batch statement: ``$1`` organizer, ``$2`` list, ``$3`` events the caller may scan
    (NULL: all), then one array per field of :class:`Scan`. Each output row is a lookup row
    (``lookup.py``'s columns), the scan's 1-based index in the batch, and the id of the entry
    written for it or NULL."""
    return f"""{_found_sql(dialect, _ARRAY_TYPES)},
ins AS (
  INSERT INTO checkins ({_CHECKIN_COLUMNS})
  SELECT {_CHECKIN_VALUES}
  FROM found f JOIN r ON r.n = f.scan_n
  WHERE {_ADMISSIBLE}
  ON CONFLICT (position_id, list_id, seq) DO NOTHING
  RETURNING id, position_id
)
SELECT found.*, ins.id FROM found LEFT JOIN ins ON ins.position_id = found.p_id"""


def recipe_version(dialect: Any) -> str:
    """The version of the recipes this code writes: a digest of the lookup, whose row a
    recipe holds. A recipe of another version (written before a deploy that changed the
    lookup) is not replayed as if it were one of this version."""
    return hashlib.sha256(statement_sql(dialect).encode()).hexdigest()[:16]


def keyed_statement_sql(dialect: Any) -> str:
    """:func:`statement_sql` for a batch with keyed scans, whose arrays of :class:`Keyed`
    follow those of :class:`Scan` (NULL for a scan without a key). A keyed scan the statement
    admits is written only together with its key's row: the row first (taken over when its
    time ran out, as a claim is), holding the lookup row, the entry written and the request
    as its recipe; the entry only if that row was written. A key already taken admits
    nothing (the scan then goes the general way, which answers it from the key). Should the
    entry then be refused after all (another process wrote the ticket's first entry in the
    meantime), the whole statement fails rather than keep a key without its entry."""
    sequence = "pg_get_serial_sequence('checkins', 'id')"
    return f"""{_found_sql(dialect, {**_ARRAY_TYPES, **_KEY_TYPES})},
ok AS (
  SELECT f.scan_n, nextval({sequence}) AS new_id
  FROM found f JOIN r ON r.n = f.scan_n
  WHERE {_ADMISSIBLE}
),
keys AS (
  INSERT INTO idempotency_keys AS k (credential, key, method, path, body_hash, status, headers,
      body, recipe, created, expires)
  SELECT r.credential, r.key, r.method, r.path, r.body_hash, 201, '[]'::jsonb, ''::bytea,
      json_build_object('kind', '{RECIPE}', 'v', '{recipe_version(dialect)}',
        'found', to_json(f), 'scan', json_build_object(
          'id', ok.new_id, 'at', r.at, 'device', r.device, 'number', r.number, 'gate', r.gate),
        'request', r.body::json),
      r.created, r.expires
  FROM ok JOIN found f ON f.scan_n = ok.scan_n JOIN r ON r.n = ok.scan_n
  WHERE r.key IS NOT NULL
  {pg_takeover("k")}
  RETURNING k.credential, k.key
),
ins AS (
  INSERT INTO checkins (id, {_CHECKIN_COLUMNS})
  SELECT ok.new_id, {_CHECKIN_VALUES}
  FROM ok JOIN found f ON f.scan_n = ok.scan_n JOIN r ON r.n = ok.scan_n
  WHERE r.key IS NULL
     OR EXISTS (SELECT 1 FROM keys WHERE keys.credential = r.credential AND keys.key = r.key)
  ON CONFLICT (position_id, list_id, seq) DO NOTHING
  RETURNING id, position_id
),
unmatched AS (  -- keys written whose entry was refused: must be none
  SELECT (SELECT count(*) FROM keys) - (SELECT count(*) FROM ins JOIN ok ON ok.new_id = ins.id
      JOIN r ON r.n = ok.scan_n WHERE r.key IS NOT NULL) AS n
)
SELECT found.*, ins.id FROM found LEFT JOIN ins ON ins.position_id = found.p_id
WHERE (SELECT 1 / (n = 0)::int FROM unmatched) = 1"""


# The batch's fast reader (by id), organizer, list and the events the caller may scan.
Key = tuple[int, int, int, tuple[int, ...] | None]
Outcome = tuple[list[Found], int | None]
_readers: dict[int, FastReader] = {}
_compiled: dict[tuple[int, bool], str] = {}


def _rounds(scans: list[Scan]) -> list[list[int]]:
    """The scans' indices by statement: a scan goes in the first statement after those of
    every earlier scan of its secret (the later one must see the earlier one's entry) and of
    its idempotency key (a key's row is written once per statement)."""
    rounds: list[list[int]] = []
    after: dict[object, int] = {}  # secret or key: the next statement free for it
    for i, scan in enumerate(scans):
        marks: list[object] = [scan.secret]
        if scan.keyed is not None:
            marks.append((scan.keyed.request.credential, scan.keyed.request.key))
        n = max(after.get(mark, 0) for mark in marks)
        for mark in marks:
            after[mark] = n + 1
        if n == len(rounds):
            rounds.append([])
        rounds[n].append(i)
    return rounds


async def _statement(key: Key, scans: list[Scan]) -> list[Outcome]:
    """One statement for scans of distinct secrets (and keys)."""
    reader, organizer_id, list_id, allowed = key
    fast = _readers[reader]
    keyed = any(scan.keyed is not None for scan in scans)
    sql = _compiled.get((reader, keyed))
    if sql is None:
        build = keyed_statement_sql if keyed else statement_sql
        sql = _compiled[(reader, keyed)] = build(fast.engine.dialect)
    columns = [[getattr(scan, name) for scan in scans] for name in _ARRAY_TYPES]
    if keyed:
        keys = [scan.keyed.values() if scan.keyed else _NO_KEY for scan in scans]
        columns += [list(column) for column in zip(*keys, strict=True)]
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
