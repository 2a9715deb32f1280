"""A key taken by a request still running and one whose lease ran out, as two lane tests
set them up: the lane statement that writes a key's row itself must leave the first alone
(409) and take the second over."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import orjson

from admit.kit.idempotency import layer as idempotency
from admit.kit.idempotency import store
from admit.models import IdempotencyKey
from tests.factories import auth

Post = Callable[[str], Awaitable[httpx.Response]]


async def running_and_lapsed(
    client: httpx.AsyncClient, factory: Any, world: Any, url: str, body: dict[str, Any]
) -> Post:
    """Rows for the keys ``running`` and ``lapsed`` of ``body`` POSTed to ``url`` by the
    world's admin; returns the POST of ``body`` with a given key."""
    payload = orjson.dumps(body)
    authorization = auth(world.admin)["Authorization"]
    credential = idempotency._credential({"headers": [(b"authorization", authorization.encode())]})
    now = dt.datetime.now(dt.UTC)
    async with factory.sessionmaker() as session:
        for key, expires in (("running", now + store.LEASE), ("lapsed", now - dt.timedelta(1))):
            session.add(
                IdempotencyKey(
                    credential=credential, key=key, method="POST", path=url,
                    body_hash=hashlib.sha256(payload).hexdigest(), status=None, headers=[],
                    body=b"", created=now, expires=expires,
                )
            )  # fmt: skip
        await session.commit()

    def post(key: str) -> Awaitable[httpx.Response]:
        headers = {
            "Authorization": authorization, "X-Idempotency-Key": key,
            "Content-Type": "application/json",
        }  # fmt: skip
        return client.post(url, content=payload, headers=headers)

    return post


async def refused_then_taken_over(post: Post, written: Callable[[], Awaitable[int]]) -> Any:
    """The running key's request is refused and writes nothing; the lapsed one's is
    answered 201 and writes one row (``written()`` counts them). Returns that answer."""
    busy = await post("running")
    assert busy.status_code == 409
    assert "still being processed" in busy.json()["detail"]
    assert await written() == 0
    taken_over = await post("lapsed")
    assert taken_over.status_code == 201
    assert await written() == 1
    return taken_over
