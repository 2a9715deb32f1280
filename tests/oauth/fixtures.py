"""Fixtures of the OAuth and page tests (tests/oauth and tests/web import them into their
conftest): they run against an app whose public URL is a loopback address
(Authlib refuses OAuth over plain HTTP elsewhere), with a client that keeps cookies."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from admit.app import create_app
from admit.config import Settings
from admit.models import User
from tests.conftest import _no_server_errors
from tests.factories import Factory
from tests.oauth.helpers import BASE, PASSWORD


@pytest.fixture(scope="session")
async def app(database_url: str, tmp_path_factory: pytest.TempPathFactory):
    data_dir: Path = tmp_path_factory.mktemp("oauth-data")
    settings = Settings(
        data_dir=data_dir, database_url=database_url, base_url=BASE, login_max_failures=3
    )
    application = create_app(settings)
    yield application
    await application.state.db.dispose()


@pytest.fixture
async def web(clean_app) -> AsyncIterator[httpx.AsyncClient]:
    """A browser-like client: keeps cookies, does not follow redirects."""
    transport = httpx.ASGITransport(app=clean_app, client=("198.51.100.7", 50000))
    async with httpx.AsyncClient(
        transport=transport, base_url=BASE, event_hooks={"response": [_no_server_errors]}
    ) as c:
        yield c


@pytest.fixture
async def api(clean_app) -> AsyncIterator[httpx.AsyncClient]:
    """A client without cookies (an OAuth client talking to the token endpoint and API)."""
    transport = httpx.ASGITransport(app=clean_app)
    async with httpx.AsyncClient(
        transport=transport, base_url=BASE, event_hooks={"response": [_no_server_errors]}
    ) as c:
        yield c


@pytest.fixture
async def alice(factory: Factory) -> User:
    return await factory.user("alice@example.org", password=PASSWORD, fullname="Alice Doe")
