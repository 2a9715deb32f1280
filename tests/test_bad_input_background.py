"""Bad ids and queries on the routes of background work, webhooks and scheduled e-mails:
always a 4xx in the documented shape (the client fixture fails any 5xx)."""

from __future__ import annotations

import pytest

from tests.factories import World, auth

ORG = "/api/v1/organizers/acme"
EV = f"{ORG}/events/summit"
BAD_IDS = ["abc", "-1", "0", "1.0", "99999999999999999999", "é" * 40, "1" * 300, "%20"]
TEMPLATES = [
    ("GET", f"{ORG}/jobs/{{x}}/"),
    ("GET", f"{ORG}/jobs/{{x}}/download/{{x}}/"),
    ("GET", f"{ORG}/webhooks/{{x}}/"),
    ("PATCH", f"{ORG}/webhooks/{{x}}/"),
    ("DELETE", f"{ORG}/webhooks/{{x}}/"),
    ("GET", f"{ORG}/webhooks/{{x}}/calls/"),
    ("POST", f"{ORG}/webhooks/{{x}}/rotate_secret/"),
    ("POST", f"{ORG}/webhooks/{{x}}/calls/{{x}}/redeliver/"),
    ("GET", f"{EV}/sendmail_rules/{{x}}/"),
    ("PATCH", f"{EV}/sendmail_rules/{{x}}/"),
    ("DELETE", f"{EV}/sendmail_rules/{{x}}/"),
]


@pytest.mark.parametrize(("method", "template"), TEMPLATES)
async def test_bad_ids_are_404(client, world: World, method: str, template: str):
    for bad in BAD_IDS:
        url = template.replace("{x}", bad)
        response = await client.request(method, url, json={}, headers=auth(world.admin))
        assert response.status_code in (403, 404), (url, response.status_code, response.text)
        assert set(response.json()) == {"detail"}, response.text


@pytest.mark.parametrize(
    "query",
    ["enabled=maybe", "page=abc", "page=0", "page_size=-5", "enabled=%00", "ordering=secret"],
)
async def test_bad_queries_on_webhook_lists(client, world: World, query: str):
    response = await client.get(f"{ORG}/webhooks/?{query}", headers=auth(world.admin))
    assert response.status_code in (200, 400, 404), response.text
    assert isinstance(response.json(), dict)


async def test_bad_call_log_queries(client, world: World):
    hook = await client.post(
        f"{ORG}/webhooks/",
        json={"target_url": "https://example.org/hook", "action_types": ["service.event.*"]},
        headers=auth(world.admin),
    )
    assert hook.status_code == 201, hook.text
    calls = f"{ORG}/webhooks/{hook.json()['id']}/calls/"
    for query in ("status=nope", "status=%00", "page=-1", "page=99"):
        response = await client.get(f"{calls}?{query}", headers=auth(world.admin))
        assert response.status_code in (200, 400, 404), (query, response.text)
        assert isinstance(response.json(), dict)
