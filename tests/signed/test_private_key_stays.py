"""The events' private signing keys never leave ``event_ticket_keys`` (issue 29): a signed
event is set up, sold, scanned, changed, cloned, exported (``json``, the shredders' export)
and listed while every response, every log line (SQL echo at debug level included, which
shows statements' parameters and the rows read) and every webhook payload is kept; none of
them holds any part of any private key."""

from __future__ import annotations

import base64
import logging

import httpx
from cryptography.hazmat.primitives import serialization
from sqlalchemy import select

from admit.models import EventTicketKey, Notification
from tests.checkin import helpers as ch
from tests.conftest import asgi_client
from tests.exports.shop import export
from tests.factories import World, auth
from tests.orders import helpers as oh
from tests.shredders import helpers as sh
from tests.signed.helpers import change, event_url, sell, sign_event


def _forms(private_pem: str) -> list[str]:
    """The ways a private key could show: its PEM, each line of the PEM's body, the raw 32
    bytes in base64 (with and without padding) and hex."""
    key = serialization.load_pem_private_key(private_pem.encode(), password=None)
    raw = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    body = [line for line in private_pem.splitlines() if line and not line.startswith("-----")]
    b64 = base64.b64encode(raw).decode()
    return [
        private_pem.strip(),
        *body,
        b64,
        b64.rstrip("="),
        raw.hex(),
        base64.b64encode(private_pem.encode()).decode()[:40],
    ]


async def test_private_keys_appear_in_no_response_export_log_or_webhook(
    clean_app, world: World, factory, background, caplog
):
    seen: list[str] = []

    async def keep(response: httpx.Response) -> None:
        await response.aread()
        seen.append(response.text)

    engine = clean_app.state.db.engine.sync_engine
    echo = engine.echo
    engine.echo = "debug"  # statements, their parameters and the rows read
    caplog.set_level(logging.DEBUG)
    try:
        async with asgi_client(clean_app, response_hooks=[keep]) as client:
            await _exercise(client, world, factory)
    finally:
        engine.echo = echo

    async with factory.sessionmaker() as s:
        keys = list(await s.scalars(select(EventTicketKey)))
        payloads = [str(n.payload) for n in await s.scalars(select(Notification))]
    assert len(keys) == 2  # the event's and its clone's
    logged = [record.getMessage() for record in caplog.records]
    assert any("event_ticket_keys" in line for line in logged), "SQL echo was not captured"
    assert len(seen) > 20 and payloads
    haystacks = {"response": seen, "log": logged, "webhook": payloads}
    for key in keys:
        for form in _forms(key.private_key):
            for where, texts in haystacks.items():
                leaked = [t[:200] for t in texts if form in t]
                assert not leaked, f"a private key shows in a {where}: {leaked}"
        # The public half is published (the check above would find a key in the answers).
        assert any(key.public_key in text for text in seen)


async def _exercise(client: httpx.AsyncClient, world: World, factory) -> None:
    await sign_event(client, world)
    for path in ("settings/", "settings/?explain", "", "orders/", "orderpositions/",
                 "revokedsecrets/", "blockedsecrets/"):  # fmt: skip
        assert (await client.get(event_url(world, path), headers=auth(world.admin))).is_success
    webhook = await client.post(
        f"/api/v1/organizers/{world.org.slug}/webhooks/",
        json={"target_url": "https://hooks.example.org/in", "enabled": True, "all_events": True,
              "limit_events": [], "action_types": ["pretix.event.order.placed",
                                                   "pretix.event.order.changed.*"]},
        headers=auth(world.admin),
    )  # fmt: skip
    assert webhook.status_code == 201, webhook.text
    item = await oh.item(factory, world.event)
    order = await sell(client, world, [{"item": item.id}, {"item": item.id}])
    first, second = order["positions"]
    entrance = await ch.checkin_list(factory, world.event)
    assert (await ch.redeem(client, world, first["secret"], [entrance.id])).status_code == 201
    await change(client, world, order["code"], add_block=[{"position": second["id"]}])
    await client.post(
        event_url(world, f"orders/{order['code']}/regenerate_secrets/"), headers=auth(world.admin)
    )
    cloned = await client.post(
        event_url(world, "clone/"),
        json={"slug": "summit-copy", "name": {"en": "Copy"}, "date_from": "2031-01-01T10:00:00Z"},
        headers=auth(world.admin),
    )
    assert cloned.status_code == 201, cloned.text
    assert (await export(client, world, "json", {})).status_code == 200
    await sh.end_event(factory, world.event)
    started = await client.post(
        sh.url(world, "export/"), json={"shredders": sh.ALL}, headers=auth(world.admin)
    )
    assert started.status_code == 202, started.text
    download = await sh.poll(client, sh.path_of(started.json()["download"]), world.admin)
    assert download.status_code == 200
    for content in sh.unzip(download.content).values():
        # the archive's members, as text, are checked like every response
        await _keep_text(client, content)


async def _keep_text(client: httpx.AsyncClient, content: bytes) -> None:
    hooks = client.event_hooks["response"]
    fake = httpx.Response(200, content=content, request=httpx.Request("GET", "http://x/"))
    await hooks[0](fake)
