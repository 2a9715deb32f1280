"""Case-insensitive search inside multi-lingual JSON text, the same on SQLite and PostgreSQL.

Multi-lingual values are JSON objects (``{"en": "...", "de": "..."}``); a search must match any
translation but never the language keys, so it walks the object's values in SQL.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import GenericFunction


class json_each_text(GenericFunction[Any]):
    """The (key, value) rows of a JSON object: ``json_each`` on SQLite, ``jsonb_each_text`` on
    PostgreSQL. Anything but an object (SQL NULL, JSON null) gives no rows on either."""

    name = "json_each_text"
    inherit_cache = True


@compiles(json_each_text, "sqlite")
def _json_each_sqlite(element: json_each_text, compiler: Any, **kw: Any) -> str:
    arg = compiler.process(element.clauses, **kw)
    return f"json_each(CASE WHEN json_type({arg}) = 'object' THEN {arg} END)"


@compiles(json_each_text, "postgresql")
def _json_each_postgresql(element: json_each_text, compiler: Any, **kw: Any) -> str:
    arg = compiler.process(element.clauses, **kw)
    return f"jsonb_each_text(CASE WHEN jsonb_typeof({arg}) = 'object' THEN {arg} END)"


def i18n_contains(column: Any, low: str) -> ColumnElement[bool]:
    """Whether any translation of a multi-lingual text contains ``low`` (already lower-cased);
    the language keys do not count."""
    values = json_each_text(column).table_valued("value")
    return (
        select(values.c.value)
        .where(func.lower(values.c.value).contains(low, autoescape=True))
        .exists()
    )
