"""Rows kept as JSON and read back with their types.

A row stored with ``to_json`` comes back through ``json_to_record``, which needs a column
definition list. The list that gives the row back with the very types, and so the very
Python values, a statement returned is that statement's own output: PostgreSQL reports it
when the statement is prepared (nothing runs).
"""

from __future__ import annotations

import asyncpg


async def column_definitions(pool: asyncpg.Pool, sql: str) -> list[str]:
    """``"name" "schema"."type"`` for each output column of ``sql``, in order."""
    async with pool.acquire() as conn:
        prepared = await conn.prepare(sql)
        attributes = prepared.get_attributes()
    return [f'"{a.name}" "{a.type.schema}"."{a.type.name}"' for a in attributes]
