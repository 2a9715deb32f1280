"""A parent row's change stamp, moved by database triggers whenever it or a child row changes.

Beside the models (it imports nothing of admit): the models declare their stamps with it, and
the plumbing that reads stamps (``kit/stamps``) may import the models, never the other way.

Declared once (:class:`ParentStamp`: the parent's stamp column and the child tables, each with
the path from a child row to its parent's id), this module writes the trigger DDL for both
databases; a migration installs it (:meth:`ParentStamp.install`) and :meth:`ParentStamp.attach`
adds it to ``metadata.create_all``. Triggers and not application code, because every write
path then moves the stamp in the same transaction as its change, whatever it is: ORM flushes,
Core statements, the raw asyncpg statements of the fast lanes (coalesced batch statements),
PL/pgSQL, background jobs, a hand-written ``UPDATE`` in ``psql``.

**What the stamp means.** A change committed by a transaction leaves the parent's stamp no
earlier than the moment that transaction *started* (PostgreSQL: ``now()``, the transaction's
start; SQLite: the statement's time, which is later than the start). A page reader that knows
the start of the oldest transaction still running when it read (``kit/stamps/page.py``) can
then hand out a bound that no later commit can fall behind.

**PostgreSQL.** Each child table gets statement-level ``AFTER`` triggers with transition
tables: per statement one query finds the parents, and one ``UPDATE`` by primary key per parent
writes it, not one per row, so a coalesced batch insert (the redeem lane writes many check-ins
in one statement, often several of one order) stays cheap. The parents are written in id order
(concurrent batches never deadlock on each other), and only those whose stamp is earlier than
this transaction's ``now()``: an order created in this transaction, or already stamped by an
earlier statement of it, is not written again (order creation inserts the order and then its
positions and answers: each of those costs an index probe, no row version). ``now()`` and not
``clock_timestamp()`` for that reason, and because what counts is whether a reader could have
missed the change, which the transaction's start decides (see ``kit/stamps/page.py``). A row
trigger on the parent (``BEFORE INSERT OR UPDATE``, filtered by ``WHEN`` so it costs nothing
when the application set a current value) raises a stamp that is missing or earlier than
``now()``: an ``UPDATE`` that did not set it, or an application clock behind the database's.
Every stamped order gets a new row version (not a HOT update: ``last_modified`` is indexed for
the polling query), which vacuum reclaims as usual.

**SQLite** (the embedded default) has no statement-level triggers and no transaction time:
row-level triggers write the statement's time (``'now'``, the same for every row of a
statement) in SQLAlchemy's text format for ``DateTime`` (``YYYY-MM-DD HH:MM:SS.ffffff``, UTC),
so comparisons with values the ORM stored and with ``modified_since`` work as text; SQLite's
clock has milliseconds, so the microseconds are ``000`` (the page bound is cut to the
millisecond as well). Only parents whose stamp is earlier are written. The parent's own
trigger fires on an ``UPDATE`` that left the stamp as it was.

**Limits.** A child row reaches its parent through the declared path at the time the trigger
runs: a child deleted by a cascade from its parent finds nothing (the parent is gone too), and
a child of a child deleted in the same statement as its intermediate row finds nothing (the
intermediate row's own trigger stamps the parent). On SQLite a migration that recreates one of
these tables (Alembic's batch mode) drops its triggers: it must install them again
(``tests/test_migrations.py`` compares the installed triggers with the declaration). A changed
declaration needs a migration that calls :meth:`ParentStamp.install` again (it replaces what
is there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Column, MetaData, event, text
from sqlalchemy.engine import Connection

# SQLAlchemy's storage format for DateTime on SQLite, from SQLite's millisecond clock.
SQLITE_NOW = "(strftime('%Y-%m-%d %H:%M:%f', 'now') || '000')"
_OPS = {"INSERT": "ins", "UPDATE": "upd", "DELETE": "del"}


def _column(attribute: Any) -> Column[Any]:
    """A model attribute (``Order.id``) or a table column, as the table's column."""
    column = getattr(attribute, "property", None)
    if column is not None:
        return column.columns[0]  # type: ignore[no-any-return]
    return attribute  # type: ignore[no-any-return]


def _primary_key(column: Column[Any]) -> str:
    (pk,) = column.table.primary_key.columns
    return pk.name


@dataclass(frozen=True)
class Child:
    """A child table: ``key`` is its column that names the parent, or the first row on the
    way there; each column of ``via`` is read from the row that the previous key names (by
    that table's primary key), the last one naming the parent. ``when``: a boolean column of
    the child; rows where it is false do not concern the parent (failed scans). ``ops``:
    the writes of the child that move the stamp."""

    key: Any
    via: Sequence[Any] = ()
    when: Any = None
    ops: Sequence[str] = ("INSERT", "UPDATE", "DELETE")

    @property
    def table(self) -> str:
        return str(_column(self.key).table.name)

    def _hops(self) -> list[tuple[str, str, str]]:
        """(table, its primary key, the column read from it) for each step of ``via``."""
        return [
            (str(c.table.name), _primary_key(c), c.name) for c in (_column(v) for v in self.via)
        ]

    def _condition(self, row: str) -> str:
        conditions = [f"{row}.{_column(self.key).name} IS NOT NULL"]
        if self.when is not None:
            conditions.append(f"{row}.{_column(self.when).name}")
        return " AND ".join(conditions)

    def parent_ids(self, rows: str) -> str:
        """SELECT of the parent ids of the rows of transition table ``rows`` (PostgreSQL)."""
        source, last = f"{rows} r", f"r.{_column(self.key).name}"
        for n, (table, pk, column) in enumerate(self._hops(), start=1):
            source += f" JOIN {table} h{n} ON h{n}.{pk} = {last}"
            last = f"h{n}.{column}"
        return f"SELECT {last} FROM {source} WHERE {self._condition('r')}"

    def parent_id(self, row: str) -> str:
        """The parent id of trigger row ``row`` (``NEW``/``OLD``) as an expression (SQLite)."""
        key = f"{row}.{_column(self.key).name}"
        hops = self._hops()
        if not hops:
            return key
        source, last = "", ""
        for n, (table, pk, column) in enumerate(hops, start=1):
            if n == 1:
                source, where = f"{table} h1", f"h1.{pk} = {key}"
            else:
                source += f" JOIN {table} h{n} ON h{n}.{pk} = {last}"
            last = f"h{n}.{column}"
        return f"(SELECT {last} FROM {source} WHERE {where})"


@dataclass(frozen=True)
class ParentStamp:
    """``stamp`` is the parent's stamp column (``Order.last_modified``); ``name`` prefixes
    every trigger and function. ``own``: writes of the parent row itself move it too (not so
    for a stamp that only marks some writes of the children, such as their deletions)."""

    name: str
    stamp: Any
    children: Sequence[Child] = field(default_factory=tuple)
    own: bool = True

    @property
    def parent(self) -> str:
        return str(_column(self.stamp).table.name)

    @property
    def _column(self) -> str:
        return _column(self.stamp).name

    @property
    def _pk(self) -> str:
        return _primary_key(_column(self.stamp))

    # -- PostgreSQL -------------------------------------------------------------------------

    def _pg_touch(self, ids: str) -> str:
        """Moves the stamp of parents ``ids`` (a SELECT of one column) to ``now()``, one
        ``UPDATE`` by primary key each, in id order: concurrent statements lock them in one
        order (no deadlock among them), and no row is locked before it is written (a
        ``SELECT … ORDER BY … FOR UPDATE`` first would log a lock record per row as well)."""
        parent, pk, col = self.parent, self._pk, self._column
        return (
            f"FOR stamp_id IN SELECT DISTINCT x.id FROM ({ids}) x(id) "
            f"WHERE x.id IS NOT NULL ORDER BY 1 LOOP\n"
            f"      UPDATE {parent} SET {col} = now() WHERE {pk} = stamp_id AND {col} < now();\n"
            "    END LOOP;"
        )

    def _pg_child(self, child: Child) -> list[str]:
        function = f"{self.name}_{child.table}"
        new, old = child.parent_ids("stamp_new"), child.parent_ids("stamp_old")
        body = (
            f"DECLARE\n  stamp_id {self.parent}.{self._pk}%TYPE;\nBEGIN\n"
            f"  IF TG_OP = 'INSERT' THEN\n    {self._pg_touch(new)}\n"
            f"  ELSIF TG_OP = 'DELETE' THEN\n    {self._pg_touch(old)}\n"
            f"  ELSE\n    {self._pg_touch(f'{new} UNION ALL {old}')}\n"
            "  END IF;\n  RETURN NULL;\nEND"
        )
        statements = [
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql "
            f"AS $fn$\n{body}\n$fn$"
        ]
        tables = {
            "INSERT": "NEW TABLE AS stamp_new",
            "UPDATE": "OLD TABLE AS stamp_old NEW TABLE AS stamp_new",
            "DELETE": "OLD TABLE AS stamp_old",
        }
        for op in child.ops:
            referencing = tables[op]
            statements.append(
                f"CREATE TRIGGER {function}_{_OPS[op]} AFTER {op} ON {child.table} "
                f"REFERENCING {referencing} FOR EACH STATEMENT EXECUTE FUNCTION {function}()"
            )
        return statements

    def _pg_self(self) -> list[str]:
        function, col = f"{self.name}_self", self._column
        return [
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql "
            f"AS $fn$\nBEGIN\n  NEW.{col} := now();\n  RETURN NEW;\nEND\n$fn$",
            f"CREATE TRIGGER {function} BEFORE INSERT OR UPDATE ON {self.parent} FOR EACH ROW "
            f"WHEN (NEW.{col} IS NULL OR NEW.{col} < now()) EXECUTE FUNCTION {function}()",
        ]

    # -- SQLite -----------------------------------------------------------------------------

    def _sqlite_touch(self, ids: list[str]) -> str:
        parent, pk, col = self.parent, self._pk, self._column
        where = f"{pk} = {ids[0]}" if len(ids) == 1 else f"{pk} IN ({', '.join(ids)})"
        return f"UPDATE {parent} SET {col} = {SQLITE_NOW} WHERE {where} AND {col} < {SQLITE_NOW};"

    def _sqlite_child(self, child: Child) -> list[str]:
        statements = []
        rows = {"INSERT": ["NEW"], "UPDATE": ["NEW", "OLD"], "DELETE": ["OLD"]}
        for op in child.ops:
            names = rows[op]
            when = " OR ".join(f"({child._condition(row)})" for row in names)
            statements.append(
                f"CREATE TRIGGER {self.name}_{child.table}_{_OPS[op]} AFTER {op} ON "
                f"{child.table} FOR EACH ROW WHEN {when} BEGIN "
                f"{self._sqlite_touch([child.parent_id(row) for row in names])} END"
            )
        return statements

    def _sqlite_self(self) -> list[str]:
        col = self._column
        return [
            f"CREATE TRIGGER {self.name}_self AFTER UPDATE ON {self.parent} FOR EACH ROW "
            f"WHEN NEW.{col} IS OLD.{col} BEGIN {self._sqlite_touch([f'NEW.{self._pk}'])} END"
        ]

    # -- both -------------------------------------------------------------------------------

    def triggers(self) -> list[tuple[str, str]]:
        """(trigger name, table) of every trigger this declaration installs."""
        found = [(f"{self.name}_self", self.parent)] if self.own else []
        for child in self.children:
            prefix = f"{self.name}_{child.table}"
            found += [(f"{prefix}_{_OPS[op]}", child.table) for op in child.ops]
        return found

    def create_ddl(self, dialect: str) -> list[str]:
        if dialect == "postgresql":
            statements = self._pg_self() if self.own else []
            for child in self.children:
                statements += self._pg_child(child)
            return statements
        if dialect == "sqlite":
            statements = self._sqlite_self() if self.own else []
            for child in self.children:
                statements += self._sqlite_child(child)
            return statements
        raise NotImplementedError(f"no change-stamp triggers for {dialect}")

    def drop_ddl(self, dialect: str) -> list[str]:
        if dialect == "postgresql":
            drops = [f"DROP TRIGGER IF EXISTS {name} ON {table}" for name, table in self.triggers()]
            functions = [f"{self.name}_self"] + [f"{self.name}_{c.table}" for c in self.children]
            return drops + [f"DROP FUNCTION IF EXISTS {f}()" for f in functions]
        return [f"DROP TRIGGER IF EXISTS {name}" for name, _table in self.triggers()]

    def install(self, connection: Connection) -> None:
        """Replaces whatever triggers of this declaration exist with the current ones."""
        dialect = connection.dialect.name
        for statement in self.drop_ddl(dialect) + self.create_ddl(dialect):
            connection.exec_driver_sql(statement)

    def uninstall(self, connection: Connection) -> None:
        for statement in self.drop_ddl(connection.dialect.name):
            connection.exec_driver_sql(statement)

    def installed(self, connection: Connection) -> set[tuple[str, str]]:
        """(trigger name, table) of this declaration's triggers present in the database."""
        if connection.dialect.name == "postgresql":
            query = (
                "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE NOT t.tgisinternal AND t.tgname LIKE :prefix ESCAPE '\\'"
            )
        else:
            query = (
                "SELECT name, tbl_name FROM sqlite_master "
                "WHERE type = 'trigger' AND name LIKE :prefix ESCAPE '\\'"
            )
        rows = connection.execute(text(query), {"prefix": f"{self.name}\\_%"})
        return {(name, table) for name, table in rows}

    def attach(self, metadata: MetaData) -> None:
        """Installs the triggers after ``metadata.create_all`` (the migrations install them
        themselves)."""

        @event.listens_for(metadata, "after_create")
        def _install(_target: Any, connection: Connection, **_kw: Any) -> None:
            self.install(connection)
