"""Every settings page (profile, password, second factor, sessions, applications) is built by
``signed_in``, so the login gate and the CSRF check are one piece of code: enumerated from the
routers, so a new page that skips them fails here."""

from __future__ import annotations

import pytest
from fastapi.routing import APIRoute

from admit.web import applications, settings
from admit.web.page import signed_in
from tests.oauth.helpers import login

ROUTES = [
    (method, route.path, route.endpoint)
    for router in (settings.router, applications.router)
    for route in router.routes
    if isinstance(route, APIRoute)
    for method in sorted(route.methods)
]
IDS = [f"{method} {path}" for method, path, _ in ROUTES]
FORMS = [(path, endpoint) for method, path, endpoint in ROUTES if method == "POST"]


def _url(path: str) -> str:
    return path.replace("{app_id}", "1")


@pytest.mark.parametrize(("method", "path", "endpoint"), ROUTES, ids=IDS)
async def test_every_page_is_signed_in(web, method, path, endpoint):
    assert getattr(endpoint, "signed_in", False), f"{path} does not use signed_in"
    response = await web.request(method, _url(path))
    assert response.status_code == 303
    assert response.headers["location"].startswith("/login?next=")


@pytest.mark.parametrize(("path", "endpoint"), FORMS, ids=[path for path, _ in FORMS])
async def test_every_form_needs_the_csrf_token(web, alice, path, endpoint):
    await login(web, alice.email)
    response = await web.post(_url(path), data={"name": "x", "csrf_token": "forged"})
    assert response.status_code == 403 and "CSRF" in response.text


def test_handlers_take_the_page_and_their_path_parameters():
    @signed_in(form=True)
    async def handler(page, pairs, app_id: int):
        raise AssertionError("not reached")

    names = list(handler.__signature__.parameters)  # what FastAPI reads
    assert names == ["request", "session", "app_id"]
    assert handler.__name__ == "handler" and handler.signed_in
