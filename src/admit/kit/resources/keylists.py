"""The ordered keys of a large list, kept by a worker while nothing the list shows changed.

A scanner that downloads a whole check-in list of 100,000 tickets asks for 100 pages of
1,000, one after the other. Paged with ``OFFSET``, every page counts the whole list and sorts
it again to skip the rows before it: at 100,000 rows about 0.35 s a page of database time,
whatever the page holds, so the 100 pages cost 35 s before a row is rendered. Instead the
first deep or large page reads the keys of the whole filtered, ordered list once (one sort),
and every later page of the same list takes its slice of them and reads the rendered rows of
that slice by key (``unnest(keys) WITH ORDINALITY``, in the kept order); the count is the
number of keys.

The answer is exactly what ``OFFSET`` paging would give, because the keys are reused only on
proof that the list is unchanged: the list's validator (``kit/stamps/pagecache.Validator``,
the same proof the kept pages rest on, e.g. no order of the event stamped and none deleted
since the keys were read, the catalog stamp equal) is read before each page, and a list that
may have changed is read again. The keys are kept per statement (its SQL and values: the
filters, the ordering and the tenant) and per database, at most :data:`MAX_LISTS` lists and
:data:`MAX_KEYS` keys in all (arrays of 64-bit integers: 800 KB for 100,000; the least
recently used lists go first). PostgreSQL's native
reader only; elsewhere pages are read with ``OFFSET`` as before.
"""

from __future__ import annotations

import datetime as dt
import weakref
from array import array
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.kit.lanes.fastread import FastReader
from admit.kit.stamps.page import page_generated
from admit.kit.stamps.pagecache import Validator

MAX_LISTS = 16
MAX_KEYS = 2_000_000  # over all kept lists of a database: 16 MB


@dataclass(frozen=True)
class KeptKeys:
    stamps: tuple[Any, ...]
    bound: dt.datetime | None
    keys: array


class KeyLists:
    """One database's kept key lists, least recently used first."""

    def __init__(self) -> None:
        self.lists: OrderedDict[tuple[Any, ...], KeptKeys] = OrderedDict()
        self.size = 0  # keys kept in all
        self.reads = 0  # key lists read from the database (for tests)

    def get(self, key: tuple[Any, ...]) -> KeptKeys | None:
        kept = self.lists.get(key)
        if kept is not None:
            self.lists.move_to_end(key)
        return kept

    def put(self, key: tuple[Any, ...], kept: KeptKeys) -> None:
        old = self.lists.pop(key, None)
        if old is not None:
            self.size -= len(old.keys)
        self.lists[key] = kept
        self.size += len(kept.keys)
        while len(self.lists) > MAX_LISTS or self.size > MAX_KEYS:
            _key, dropped = self.lists.popitem(last=False)
            self.size -= len(dropped.keys)


# By the reader's engine: one database's keys never answer for another's.
_kept: weakref.WeakKeyDictionary[Any, KeyLists] = weakref.WeakKeyDictionary()


def kept_lists(reader: FastReader) -> KeyLists:
    lists = _kept.get(reader.engine)
    if lists is None:
        lists = _kept[reader.engine] = KeyLists()
    return lists


def statement_key(stmt: Select[Any]) -> tuple[Any, ...]:
    """What identifies a statement's rows: its SQL shape and its values."""
    cache_key = stmt._generate_cache_key()
    assert cache_key is not None
    values = tuple(repr(b.effective_value) for b in cache_key.bindparams)
    return (cache_key.key, values)


def _split(validator: Validator, row: Any) -> tuple[tuple[Any, ...], bool]:
    if row is None:
        return (), True
    if validator.probes:
        return tuple(row[:-1]), bool(row[-1])
    return tuple(row), False


async def ordered_keys(
    reader: FastReader,
    session: AsyncSession,
    keys: Select[Any],
    validator: Validator,
    params: Mapping[str, Any],
) -> array:
    """The keys ``keys`` (one column, ordered) selects: kept ones while ``validator``
    (with ``params``) proves the rows unchanged since they were read, else read now."""
    lists = kept_lists(reader)
    key = (statement_key(keys), *sorted(params.items()))
    kept = lists.get(key)
    bound = kept.bound if kept is not None else None
    row = await reader.one(session, validator.stamps, {**params, "bound": bound})
    stamps, changed = _split(validator, row)
    if kept is not None and stamps == kept.stamps and not changed:
        return kept.keys
    # Read before the keys are: the stamps hold for them, the probes need a bound of its own.
    bound = await page_generated(session) if validator.probes else None
    found = await reader.rows(session, keys, {}, static=False)
    lists.reads += 1
    values = array("q", (r[0] for r in found))
    if len(values) <= MAX_KEYS:
        lists.put(key, KeptKeys(stamps, bound, values))
    return values
