"""End to end: a due rule's mail reaches a real SMTP server (aiosmtpd), once."""

from __future__ import annotations

from tests.checkin import helpers as h
from tests.factories import World, auth
from tests.mail.conftest import Mailbox, settle
from tests.sendmail.helpers import enable_plugin, mails, order, rules_url, run
from tests.sendmail.test_sending import DUE, REMINDER


async def test_a_scheduled_mail_arrives(
    client, clean_app, background, smtp: Mailbox, world: World, factory
):
    await enable_plugin(factory, world.event, timezone="Europe/Berlin")
    ticket = await h.ticket(factory, world.event)
    placed, _ = await order(factory, world.event, ticket, email="fan@example.org")
    body = {**REMINDER, "template": "Dear {name} <b>,\n\n{url}"}
    response = await client.post(rules_url(world), json=body, headers=auth(world.admin))
    assert response.status_code == 201, response.text

    assert await run(clean_app, DUE) == 1
    [mail] = await mails(clean_app)
    job = await settle(clean_app, mail.job_id)
    assert job.status == "finished", job.message
    assert await run(clean_app, DUE) == 0

    [message] = smtp.messages
    assert message["To"] == "fan@example.org"
    assert message["Subject"] == f"Reminder: Summit ({placed.code})"
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert text.startswith("Dear Guest 1 <b>,\n\nhttps://tickets.example/acme/summit/order/")
    assert "Dear Guest 1 &lt;b&gt;," in html and "<b>" not in html
