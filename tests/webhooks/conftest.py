"""A local HTTP receiver (a small asyncio server on 127.0.0.1) for the webhook tests, settings
for fast retries, and helpers that drive the fan-out and the delivery jobs to an end."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import select

from admit.db import utcnow
from admit.kit.http.transaction import commit_and_notify
from admit.models import Notification, Webhook, WebhookCall
from admit.webhooks.fanout import fan_out
from tests.factories import World, auth

HOOKS = "/api/v1/organizers/acme/webhooks/"


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """Answers each request with the next of ``statuses`` (then 200), keeps what it got."""

    url: str = ""
    requests: list[Received] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    extra_headers: dict[str, str] = field(default_factory=dict)
    answer: bytes = b'{"ok": true}'
    stall: float = 0.0  # seconds to sit on a request before answering

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    name, value = line.split(":", 1)
                    headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.requests.append(Received(method, path, headers, body))
            await asyncio.sleep(self.stall)
            status = self.statuses.pop(0) if self.statuses else 200
            extra = "".join(f"{k}: {v}\r\n" for k, v in self.extra_headers.items())
            writer.write(
                f"HTTP/1.1 {status} X\r\nContent-Length: {len(self.answer)}\r\n"
                f"Content-Type: application/json\r\nConnection: close\r\n{extra}\r\n".encode()
                + self.answer
            )
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the sender gave up (a timeout)
        finally:
            writer.close()


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    box = Receiver()
    server = await asyncio.start_server(box.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    box.url = f"http://127.0.0.1:{port}/hook"
    try:
        yield box
    finally:
        server.close()
        await server.wait_closed()


@pytest.fixture
def fast_retries(clean_app) -> Iterator[Any]:
    """Private targets allowed (the receiver is on 127.0.0.1), retries after milliseconds."""
    settings = clean_app.state.settings
    saved = settings.webhook_allow_private, settings.webhook_retry_base_seconds
    settings.webhook_allow_private = True
    settings.webhook_retry_base_seconds = 0.01
    try:
        yield settings
    finally:
        settings.webhook_allow_private, settings.webhook_retry_base_seconds = saved


async def run_fan_out(app: Any) -> int:
    """One fan-out run, committed as the scheduler commits it (jobs handed over after)."""
    async with app.state.db.sessionmaker() as session:
        created = await fan_out(session, utcnow())
        await commit_and_notify(session)
    return created


async def pump(app: Any, done: Callable[[], Awaitable[bool]], seconds: float = 15) -> None:
    """Runs the fan-out and waits for the delivery jobs until ``done()``."""
    engine = app.state.background.engine
    deadline = time.monotonic() + seconds
    while True:
        await run_fan_out(app)
        await engine.broker.wait_all()
        if await done():
            return
        if time.monotonic() > deadline:
            raise AssertionError("webhook deliveries did not settle")
        await asyncio.sleep(0.02)


async def create_hook(client: Any, world: World, url: str, **kw: Any) -> dict[str, Any]:
    body = {"target_url": url, "action_types": ["service.event.orders.waitinglist.*"], **kw}
    response = await client.post(HOOKS, json=body, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    # Cursors start at the present: a run now, so what the test writes next is new.
    await run_fan_out(client._transport.app)
    return response.json()


async def notify(app: Any, organizer_id: int, event_id: int | None, action: str, **payload: Any):
    async with app.state.db.sessionmaker() as session:
        row = Notification(
            organizer_id=organizer_id,
            event_id=event_id,
            action=action,
            payload=payload,
            created=utcnow(),
        )
        session.add(row)
        await session.commit()
        return row.id


async def calls(app: Any, webhook_id: int | None = None) -> list[WebhookCall]:
    async with app.state.db.sessionmaker() as session:
        query = select(WebhookCall).order_by(WebhookCall.id)
        if webhook_id is not None:
            query = query.where(WebhookCall.webhook_id == webhook_id)
        return list((await session.scalars(query)).all())


async def hook_row(app: Any, webhook_id: int) -> Webhook:
    async with app.state.db.sessionmaker() as session:
        return await session.get(Webhook, webhook_id)


def verify(secret: str, request: Received) -> list[bool]:
    """Each ``v1`` signature of the request, checked against ``secret`` (as a receiver does)."""
    fields = [part.split("=", 1) for part in request.headers["admit-signature"].split(",")]
    stamp = next(v for k, v in fields if k == "t")
    assert abs(int(stamp) - time.time()) < 60
    expected = hmac.new(
        secret.encode(), stamp.encode() + b"." + request.body, hashlib.sha256
    ).hexdigest()
    return [hmac.compare_digest(v, expected) for k, v in fields if k == "v1"]
