"""Driver errors of a lost connection are 503s that no layer re-raises as a server error."""

from __future__ import annotations

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from admit.kit.http.errors import install_error_handlers


def _app(exc: Exception) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/boom")
    async def boom() -> None:
        raise exc

    return app


@pytest.mark.parametrize(
    "exc",
    [
        # What asyncpg raises for a pooled connection the server ended mid-operation.
        asyncpg.InternalClientError(
            "cannot switch to state 12; another operation (2) is in progress"
        ),
        asyncpg.InterfaceError("connection is closed"),
        ConnectionResetError(104, "Connection reset by peer"),
    ],
    ids=["internal-client", "interface", "reset"],
)
async def test_lost_connection_is_503_and_not_re_raised(exc: Exception):
    # raise_app_exceptions: an error the framework re-raises after answering fails the test.
    transport = httpx.ASGITransport(app=_app(exc), raise_app_exceptions=True)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.get("/boom")
    assert response.status_code == 503
    assert response.headers["Retry-After"]
    assert set(response.json()) == {"detail"}
