"""OAuth over plain http to a host that is not this machine is refused with a 400 (Authlib
raises while the request is built: it was a 500 on the authorization page)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from admit.app import create_app
from admit.config import Settings
from admit.migrate import upgrade

BASE = "http://admit.example.org"


async def test_plain_http_oauth_is_a_400_not_a_500(tmp_path: Path):
    url = f"sqlite+aiosqlite:///{tmp_path / 'oauth.sqlite3'}"
    await asyncio.to_thread(upgrade, url)
    app = create_app(Settings(data_dir=tmp_path, database_url=url, base_url=BASE))
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
            query = "?response_type=code&client_id=x&redirect_uri=http://x/cb"
            page = await client.get(f"/api/v1/oauth/authorize{query}")
            assert page.status_code == 400
            assert "insecure_transport" in page.text
            token = await client.post(
                "/api/v1/oauth/token", data={"grant_type": "authorization_code", "code": "x"}
            )
            assert token.status_code == 400
            assert token.json()["error"] == "insecure_transport"
    finally:
        await app.state.db.dispose()
