"""A scheduled export end to end with nothing stood in: a user logs in and grants an OAuth
application access through the pages, the application's Bearer token (from the token
endpoint) creates the export, the scheduler starts it when due, the job runs the real quota
exporter, and the file reaches a real SMTP server (aiosmtpd) as the mail's attachment."""

from __future__ import annotations

import csv
import datetime as dt
import io

from admit.auth.permissions import EVENT_PERMISSIONS
from admit.models import User
from tests.factories import Factory, World
from tests.mail.conftest import Mailbox
from tests.oauth import fixtures
from tests.oauth.helpers import REDIRECT, get_code, login, make_app
from tests.scheduled_exports.conftest import E, body, export_row
from tests.scheduled_exports.test_runs import attachment, run_due

# The OAuth tests' app (its public URL a loopback address, where Authlib allows plain HTTP),
# browser and client.
app, web, api, alice = fixtures.app, fixtures.web, fixtures.api, fixtures.alice


async def _bearer(web, api, factory: Factory, world: World, user: User) -> str:
    """An access token from the authorization-code flow: login, consent, token endpoint."""
    await factory.team(world.org, members=[user], event_permissions=list(EVENT_PERMISSIONS))
    application = await make_app(factory, name="Reporting")
    assert (await login(web, user.email)).status_code == 303
    code = await get_code(web, application, [world.org], scope="read write")
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT}
    response = await api.post("/api/v1/oauth/token", data=data, headers=application.basic)
    assert response.status_code == 200, response.text
    assert response.json()["token_type"] == "Bearer"
    return response.json()["access_token"]


async def test_a_bearer_tokens_scheduled_quota_list_arrives_by_mail(
    clean_app, background, smtp: Mailbox, web, api, factory, world: World, alice
):
    for name, size in (("Early bird", 50), ("Regular", 300)):
        await factory.quota(world.event, size, name=name)
    token = await _bearer(web, api, factory, world, alice)

    created = await api.post(
        E,
        json=body(
            export_identifier="quotalist",
            export_form_data={"_format": "csv"},
            mail_additional_recipients="finance@example.org",
            mail_subject="Quotas this morning",
            mail_template="Good morning, the quotas are attached.",
        ),
        headers={"Authorization": f"Bearer {token}"},
    )
    assert created.status_code == 201, created.text
    export = created.json()
    assert export["owner"] == alice.email
    row = await export_row(clean_app, export["id"])
    assert row.owner_id == alice.id

    # Not due yet: nothing runs. Due: one run, through the real exporter and the outbox.
    due = row.schedule_next_run
    assert await run_due(clean_app, due - dt.timedelta(minutes=1)) == []
    [job] = await run_due(clean_app, due + dt.timedelta(seconds=30))
    assert job.status == "finished", job.message

    [envelope] = smtp.envelopes
    assert sorted(envelope.rcpt_tos) == ["alice@example.org", "finance@example.org"]
    [message] = smtp.messages
    assert message["Subject"] == "Quotas this morning"
    assert "the quotas are attached." in message.get_body(("plain",)).get_content()
    name, content_type, data = attachment(message)
    assert name.endswith(".csv") and content_type == "text/csv", (name, content_type)
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert rows[0][:4] == ["Quota ID", "Quota name", "Products", "Total quota"], rows[0]
    assert [(r[1], r[3]) for r in rows[1:]] == [("Early bird", "50"), ("Regular", "300")]
    assert (await export_row(clean_app, export["id"])).schedule_next_run > due
