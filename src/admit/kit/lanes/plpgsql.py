"""SQLAlchemy statements inside PL/pgSQL functions, so a fast path states no rule twice.

A guarded write (lock, count, insert) done as one function call keeps the row lock inside
PostgreSQL for a fraction of a millisecond; done as separate statements from an event loop it
is held across several round trips and every other request's CPU slice in between. The
function bodies embed the same statements the general path runs (:func:`embed`), so the two
paths cannot drift apart on what they count or write.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sqlalchemy.engine import Dialect

_PLACEHOLDER = re.compile(r"\$(\d+)")


def embed(stmt: Any, dialect: Dialect, variables: Mapping[str, str]) -> str:
    """The statement's SQL with each bound parameter replaced by a PL/pgSQL expression.

    ``variables`` maps parameter names to expressions (function arguments, locals); the
    parameters SQLAlchemy creates for literals (``coalesce(x, 0)``) are inlined. Any other
    unbound parameter is an error, so a statement that gains a parameter fails loudly here.
    """
    compiled = stmt.compile(dialect=dialect)
    names = list(compiled.positiontup or ())

    def replace(match: re.Match[str]) -> str:
        name = names[int(match.group(1)) - 1]
        if name in variables:
            return f"({variables[name]})"
        value = compiled.params.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        raise ValueError(f"parameter {name!r} has no PL/pgSQL variable")

    return _PLACEHOLDER.sub(replace, compiled.string)


def temp_function(name: str, arguments: str, returns: str, declare: str, body: str) -> str:
    """``CREATE FUNCTION pg_temp.<name>``: one per connection, created when it opens, so the
    function always matches the code of the process calling it (no migration, no clash
    between versions during a rolling deploy).

    Sequential scans are off inside: PL/pgSQL keeps one generic plan per statement for the
    connection's life, and a generic plan cannot see that ``expires < now`` matches almost no
    cart (it assumes a third of them), so it scanned the whole cart table on every call once
    the table was big (the cart rush fell from 3,000 to 1,200/s in a minute). Every
    statement here is meant to go by index; the setting makes the generic plans do so."""
    return (
        f"CREATE OR REPLACE FUNCTION pg_temp.{name}({arguments}) RETURNS {returns} "
        "LANGUAGE plpgsql SET enable_seqscan = off "
        f"AS $fn$\nDECLARE\n{declare}\nBEGIN\n{body}\nEND\n$fn$"
    )
