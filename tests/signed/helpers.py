"""Setting up a signed event and selling from it through the API."""

from __future__ import annotations

import datetime as dt
from typing import Any

import httpx

from admit.models import Event
from tests.factories import World, auth
from tests.signed import decoder


def event_url(world: World, rest: str = "", event: Event | None = None) -> str:
    slug = (event or world.event).slug
    return f"/api/v1/organizers/{world.org.slug}/events/{slug}/{rest}"


async def sign_event(client: httpx.AsyncClient, world: World, event: Event | None = None) -> str:
    """Switches the event to ``pretix_sig1``; returns the published public key."""
    patched = await client.patch(
        event_url(world, "settings/", event),
        json={"ticket_secret_generator": "pretix_sig1"},
        headers=auth(world.admin),
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["ticket_secret_generator"] == "pretix_sig1"
    detail = await client.get(event_url(world, "", event), headers=auth(world.admin))
    (key,) = detail.json()["valid_keys"]["pretix_sig1"]
    return str(key)


async def sell(
    client: httpx.AsyncClient, world: World, positions: list[dict[str, Any]], **kw: Any
) -> dict[str, Any]:
    body = {"email": "fan@example.org", "status": "p", "payment_provider": "manual"}
    body.update(positions=positions, **kw)
    created = await client.post(event_url(world, "orders/"), json=body, headers=auth(world.admin))
    assert created.status_code == 201, created.text
    return created.json()  # type: ignore[no-any-return]


async def change(client: httpx.AsyncClient, world: World, code: str, **body: Any) -> httpx.Response:
    return await client.post(
        event_url(world, f"orders/{code}/change/"), json=body, headers=auth(world.admin)
    )


def unix(text: str | None) -> int | None:
    return None if text is None else int(dt.datetime.fromisoformat(text).timestamp())


def check_certifies(secret: str, key: str, position: dict[str, Any]) -> decoder.Ticket:
    """The secret verifies with ``key`` and certifies what the position is."""
    ticket = decoder.decode(secret, decoder.public_key(key))
    assert ticket.item == position["item"]
    assert ticket.variation == (position["variation"] or 0)
    assert ticket.subevent == (position["subevent"] or 0)
    assert ticket.valid_from == unix(position["valid_from"])
    assert ticket.valid_until == unix(position["valid_until"])
    assert len(ticket.seed) == 9
    return ticket
