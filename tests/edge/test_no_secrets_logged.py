"""A broad set of requests carrying every kind of secret, with everything Admit and uvicorn
log captured at DEBUG in both formats: none of the secrets may appear in any line."""

from __future__ import annotations

import logging
import secrets
import uuid
from pathlib import Path

from sqlalchemy.exc import IntegrityError

from admit.auth.credentials import generate_token
from tests.checkin import helpers as checkin
from tests.edge.helpers import captured_logs, client_for, edge_app
from tests.factories import Factory, World, auth
from tests.oauth.helpers import BASE, PASSWORD, authorize_url, bearer_token, csrf, make_app


async def test_no_secret_reaches_the_logs(
    database_url: str, tmp_path: Path, world: World, factory: Factory
):
    org = world.org.slug
    user = await factory.user("fan@example.org", password=PASSWORD)
    oauth_app = await make_app(factory)
    bearer = await bearer_token(factory, oauth_app, user, [world.org])
    device_token, _device = await checkin.device(factory, world.org)
    item = await checkin.ticket(factory, world.event)
    clist = await checkin.checkin_list(factory, world.event)
    _order, positions = await checkin.order(factory, world.event, item, n=2)
    giftcard_secret = "GIFT-" + secrets.token_hex(8).upper()
    reset_token, invite_token, job_secret = (generate_token(), generate_token(32), "jsec" * 8)
    unknown_ticket = secrets.token_hex(16)
    invalid_token = generate_token()
    wrong_password = "not the password 9000"
    code = generate_token(48)
    leaked = secrets.token_hex(20)

    async def fails_with_parameters() -> None:
        raise IntegrityError("INSERT INTO t (secret) VALUES (?)", (leaked,), Exception("dup"))

    events = f"/api/v1/organizers/{org}/events/"
    with captured_logs(logging.DEBUG) as logs:
        # Loopback: Authlib refuses OAuth over plain HTTP elsewhere.
        async with (
            edge_app(database_url, tmp_path, base_url=BASE) as app,
            client_for(app, base_url=BASE, checked=False) as client,
        ):
            app.add_api_route("/_edge_fails", fails_with_parameters)
            await client.get(events, headers=auth(world.admin))
            await client.get(events, headers=auth(invalid_token))
            await client.get(f"{events}?token={world.admin}&secret={world.nobody}")
            await client.get(events, headers={"Authorization": f"Bearer {bearer}"})
            await client.get("/api/v1/oauth/me", headers={"Authorization": f"Bearer {bearer}"})
            for position in positions:
                await checkin.redeem(
                    client,
                    world,
                    position.secret,
                    [clist.id],
                    headers=checkin.device_auth(device_token),
                )
            await checkin.redeem(client, world, unknown_ticket, [clist.id], token=world.admin)
            await client.get(
                f"/api/v1/organizers/{org}/checkinrpc/search/?search={positions[0].secret}",
                headers=auth(world.admin),
            )
            await client.post(
                f"/api/v1/organizers/{org}/giftcards/",
                json={"secret": giftcard_secret, "currency": "EUR", "value": "10.00"},
                headers=auth(world.admin),
            )
            await client.get(
                f"/api/v1/organizers/{org}/giftcards/?secret={giftcard_secret}",
                headers=auth(world.admin),
            )
            page = await client.get("/login")
            for password in (wrong_password, PASSWORD):
                await client.post(
                    "/login",
                    data={
                        "csrf_token": csrf(page.text),
                        "email": "fan@example.org",
                        "password": password,
                    },
                )
            await client.get(f"/password-reset/{reset_token}/")
            await client.get(f"/invite/{invite_token}/")
            await client.get(f"/api/v1/organizers/{org}/jobs/{uuid.uuid4()}/download/{job_secret}/")
            await client.get(authorize_url(oauth_app, state=code))
            await client.post(
                "/api/v1/oauth/token",
                data={"grant_type": "authorization_code", "code": code, "redirect_uri": "x"},
                headers=oauth_app.basic,
            )
            await client.post(
                "/api/v1/oauth/token",
                data={"grant_type": "refresh_token", "refresh_token": code},
                auth=(oauth_app.client_id, oauth_app.secret or ""),
            )
            assert (await client.get("/_edge_fails")).status_code == 500

    everything = "\n".join(logs.json_lines + logs.text_lines)
    assert len(logs.records) >= 20  # the access lines at least
    assert "unhandled error on GET /_edge_fails" in everything  # the traceback was logged
    assert "[parameters: [redacted]]" in everything
    secret_values = {
        "API token": world.admin,
        "other API token": world.nobody,
        "invalid token": invalid_token,
        "bearer": bearer,
        "device token": device_token,
        "ticket secret": positions[0].secret,
        "second ticket secret": positions[1].secret,
        "unknown ticket secret": unknown_ticket,
        "gift card secret": giftcard_secret,
        "password": PASSWORD,
        "wrong password": wrong_password,
        "reset token": reset_token,
        "invite token": invite_token,
        "job secret": job_secret,
        "OAuth code": code,
        "OAuth client secret": oauth_app.secret or "",
        "database parameter": leaked,
    }
    found = {name for name, value in secret_values.items() if value and value in everything}
    assert not found, f"written to the logs: {sorted(found)}"
