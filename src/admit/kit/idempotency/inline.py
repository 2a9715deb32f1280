"""Keyed lane requests whose key and answer are written by the statement that makes the change.

A lane statement makes its change and commits on its own (autocommit, one statement for a
coalesced batch). A keyed request must commit its stored answer with that change. Done with a
transaction around the statement, held open until the answer was rendered in Python and
written back, a sale held the quota lock across the rendering and a second round trip; and
the claim of the key before it was one more statement that every keyed request waited for.
The keyed cart rush ran at 55-67 % of the plain one.

Most of an answer is known before the change is made; what the database adds is the id of
the row written. So the answer is rendered first with a random *sentinel* number where that
id goes (:func:`prepare`), and the statement that writes the row first writes the key's row
with that answer, the sentinel replaced by the id (:func:`key_insert`, embedded in the lane's
statement). A key already taken (by a finished or running request: the row is there and its
lease or retention has not run out) makes that request write nothing; the lane then answers
it as the idempotency layer does (``idempotency.settle``). This module replaces the sentinel
the same way (:meth:`Inline.response`): the answer sent is byte for byte the answer stored,
and both are committed with the change in one statement. A sentinel is a random 18-digit
number drawn per request, so no text of the answer contains it by chance, nor on purpose
(nobody knows it in advance).
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable
from dataclasses import dataclass

import orjson
from sqlalchemy import Insert, String, bindparam, cast, func, literal_column
from sqlalchemy.dialects.postgresql import JSONB, insert
from starlette.responses import Response
from starlette.types import Scope

from admit.db import utcnow
from admit.kit.idempotency.store import CLAIM, UNCLAIMED, Answer, Claim, Request, claiming
from admit.models import IdempotencyKey

# The per-request values :func:`key_insert` takes (besides ``value``, the id written, and
# ``key_created``, the statement's time), in the order of :meth:`Inline.columns`.
COLUMNS = (
    "key_credential", "key_key", "key_method", "key_path", "key_body_hash",
    "key_status", "key_headers", "key_body", "key_sentinel", "key_expires",
)  # fmt: skip
TYPES = ("varchar[]",) * 5 + ("integer[]", "text[]", "text[]", "text[]", "timestamptz[]")
_VALUE = cast(bindparam("value"), String)


def key_insert() -> Insert:
    """The key's row, with its answer: ``key_body`` with ``key_sentinel`` replaced by
    ``value``. Like a claim (``idempotency_store``) it takes over a row whose time ran out;
    it writes and returns nothing when the key is taken."""
    stmt = insert(IdempotencyKey).values(
        credential=bindparam("key_credential"),
        key=bindparam("key_key"),
        method=bindparam("key_method"),
        path=bindparam("key_path"),
        body_hash=bindparam("key_body_hash"),
        status=bindparam("key_status"),
        headers=cast(bindparam("key_headers"), JSONB),
        body=func.convert_to(
            func.replace(bindparam("key_body"), bindparam("key_sentinel"), _VALUE),
            literal_column("'UTF8'"),
        ),
        created=bindparam("key_created"),
        expires=bindparam("key_expires"),
    )
    return claiming(stmt).returning(IdempotencyKey.id)


@dataclass
class Inline:
    """One keyed request's answer, rendered before its change (see the module)."""

    request: Request
    answer: Answer  # with the sentinel where the id goes
    sentinel: str
    expires: dt.datetime

    def columns(self) -> tuple[object, ...]:
        """This request's values for :data:`COLUMNS`."""
        r, answer = self.request, self.answer
        return (
            *(r.credential, r.key, r.method, r.path, r.body_hash),
            *(answer.status, orjson.dumps(answer.headers).decode(), answer.body.decode()),
            *(self.sentinel, self.expires),
        )

    def response(self, scope: Scope, value: int, created: dt.datetime) -> Response:
        """The answer as the statement stored it for the row ``value`` (at ``created``); the
        request's key is settled (the idempotency layer stores nothing more)."""
        stored_inline(scope, self.request, created)
        body = self.answer.body.replace(self.sentinel.encode(), str(value).encode())
        return Answer(self.answer.status, self.answer.headers, body).response()


def stored_inline(scope: Scope, request: Request, created: dt.datetime) -> None:
    """Marks the key of ``scope``'s request as stored by the lane statement (at ``created``):
    neither claimed nor stored again by the idempotency layer."""
    scope.pop(UNCLAIMED, None)
    scope[CLAIM] = Claim(0, created, request, state="stored")


def prepare(request: Request, render: Callable[[int], Response], hours: float) -> Inline:
    """``render(id)`` with a sentinel for the id the change will get, kept ``hours``."""
    number = secrets.randbelow(9 * 10**17) + 10**17
    rendered = render(number)
    answer = Answer.of(rendered.status_code, rendered.raw_headers, bytes(rendered.body))
    expires = utcnow() + dt.timedelta(hours=hours)
    return Inline(request, answer, str(number), expires)
