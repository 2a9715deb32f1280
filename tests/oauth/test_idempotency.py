"""The token endpoint takes no ``X-Idempotency-Key``: its answers carry the tokens (never kept
in plain text), and a repeated code exchange must count as the code's reuse, not be answered
with the same tokens again."""

from __future__ import annotations

from sqlalchemy import select

from admit.kit.idempotency.secret import REFUSED
from admit.models import IdempotencyKey, OAuthToken
from tests.oauth.helpers import REDIRECT, get_code, login, make_app

TOKEN = "/api/v1/oauth/token"


async def test_a_keyed_code_exchange_is_refused_and_reuse_still_counts(
    web, api, factory, world, alice
):
    await factory.team(world.org, members=[alice], event_permissions=["event.orders:read"])
    app = await make_app(factory)
    await login(web, alice.email)
    code = await get_code(web, app, [world.org])
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT}
    keyed = {**app.basic, "X-Idempotency-Key": "exchange-1"}
    for _ in range(2):
        response = await api.post(TOKEN, data=data, headers=keyed)
        assert response.status_code == 400, response.text
        assert response.json() == {"detail": REFUSED}
    async with factory.sessionmaker() as session:
        assert (await session.execute(select(IdempotencyKey))).first() is None
        assert (await session.execute(select(OAuthToken))).first() is None
    first = await api.post(TOKEN, data=data, headers=app.basic)
    assert first.status_code == 200, first.text
    again = await api.post(TOKEN, data=data, headers=app.basic)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    events = f"/api/v1/organizers/{world.org.slug}/events/"
    bearer = {"Authorization": f"Bearer {first.json()['access_token']}"}
    assert (await api.get(events, headers=bearer)).status_code == 401  # reuse revoked them
    refresh = {"grant_type": "refresh_token", "refresh_token": first.json()["refresh_token"]}
    assert (await api.post(TOKEN, data=refresh, headers=keyed)).status_code == 400
