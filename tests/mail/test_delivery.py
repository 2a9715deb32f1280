"""Mails queued by real actions reach a real SMTP server, once, in the right shape."""

from __future__ import annotations

from sqlalchemy import func, select

from admit.mail.outbox import queue_mail
from admit.mail.tasks import NO_SMTP
from admit.models import Job, OutgoingMail
from tests.factories import World, auth
from tests.mail.conftest import Mailbox, all_rows, job_row, mail_row, queue, settle

TEAMS = "/api/v1/organizers/acme/teams/"


async def test_a_team_invite_is_delivered_once_with_text_and_escaped_html(
    client, background, smtp: Mailbox, world: World, factory
):
    team = await factory.team(world.org, name="Door <script>alert(1)</script> staff")
    response = await client.post(
        f"{TEAMS}{team.id}/invites/", json={"email": "new@example.org"}, headers=auth(world.admin)
    )
    assert response.status_code == 201, response.text
    [mail] = await all_rows(client._transport.app, OutgoingMail)
    job = await settle(client._transport.app, mail.job_id)
    assert (job.status, job.message) == ("finished", "Sent to 1 recipient(s).")

    [envelope] = smtp.envelopes
    assert envelope.mail_from == "admit@localhost"
    assert envelope.rcpt_tos == ["new@example.org"]
    [message] = smtp.messages
    sender = message["From"].addresses[0]
    assert (sender.display_name, sender.addr_spec) == ("Acme", "admit@localhost")
    assert message["To"] == "new@example.org"
    # A long subject is folded onto a continuation line; unfolded, it is the same text.
    subject = "You have been invited to the team Door <script>alert(1)</script> staff"
    assert message["Subject"].strip() == subject
    assert message["Message-ID"] == mail.message_id and mail.message_id.endswith("@localhost>")
    assert message["Auto-Submitted"] == "auto-generated"
    assert message.get_content_type() == "multipart/alternative"
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert "/invite/" in text and "Door <script>alert(1)</script> staff" in text
    assert "Door &lt;script&gt;alert(1)&lt;/script&gt; staff" in html
    assert "<script>" not in html
    assert '<a href="http://testserver/invite/' in html

    sent = await mail_row(client._transport.app, mail.id)
    assert (sent.status, sent.attempts, sent.error) == ("sent", 1, None)
    assert sent.sent is not None


async def test_event_name_as_sender_cc_bcc_and_attachments(clean_app, background, smtp, factory):
    org = await factory.organizer("fest", name="Fest GmbH")
    event = await factory.event(org, "city", name={"de": "Stadtfest Zürich", "fr": "Fête"})
    store = background.store
    async with store.writer("mail/tests/plan.pdf") as handle:
        handle.write(b"%PDF-1.4 plan")
    _, job_id = await queue(
        clean_app,
        to=["a@example.org"],
        cc=["b@example.org"],
        bcc=["c@example.org"],
        subject="Your plan",
        body="See the plan attached.\n",
        html="<p>See the plan attached.</p>",
        attachments=[
            {
                "key": "mail/tests/plan.pdf",
                "filename": "plan.pdf",
                "content_type": "application/pdf",
            }
        ],
        organizer_id=org.id,
        event_id=event.id,
    )
    job = await settle(clean_app, job_id)
    assert (job.status, job.message) == ("finished", "Sent to 3 recipient(s).")
    [envelope] = smtp.envelopes
    assert sorted(envelope.rcpt_tos) == ["a@example.org", "b@example.org", "c@example.org"]
    [message] = smtp.messages
    assert message["From"].addresses[0].display_name == "Stadtfest Zürich"
    assert (message["To"], message["Cc"], message["Bcc"]) == (
        "a@example.org",
        "b@example.org",
        None,
    )
    assert message.get_content_type() == "multipart/mixed"
    assert message.get_body(("plain",)).get_content() == "See the plan attached.\n"
    assert "<p>See the plan attached.</p>" in message.get_body(("html",)).get_content()
    [attachment] = list(message.iter_attachments())
    assert attachment.get_filename() == "plan.pdf"
    assert attachment.get_content_type() == "application/pdf"
    assert attachment.get_content() == b"%PDF-1.4 plan"


async def test_without_smtp_the_mail_stays_queued(clean_app, background, mailbox):
    assert clean_app.state.settings.smtp_url is None
    mail_id, job_id = await queue(clean_app)
    job = await settle(clean_app, job_id)
    assert (job.status, job.message) == ("finished", NO_SMTP)
    mail = await mail_row(clean_app, mail_id)
    assert (mail.status, mail.attempts, mail.sent) == ("queued", 0, None)
    assert mailbox.envelopes == []


async def test_a_rolled_back_transaction_leaves_no_mail_no_job_and_sends_nothing(
    clean_app, background, smtp
):
    ran = background.engine.ran
    async with clean_app.state.db.sessionmaker() as session:
        await queue_mail(session, to=["x@example.org"], subject="Never", body="Never.\n")
        await session.rollback()
    await background.engine.broker.wait_all()
    async with clean_app.state.db.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(OutgoingMail)) == 0
        assert await session.scalar(select(func.count()).select_from(Job)) == 0
    assert background.engine.ran == ran
    assert smtp.envelopes == []


async def test_a_rejected_request_queues_no_mail(client, background, smtp, world: World, factory):
    team = await factory.team(world.org, name="Door staff")
    url = f"{TEAMS}{team.id}/invites/"
    assert (
        await client.post(url, json={"email": "a@example.org"}, headers=auth(world.admin))
    ).status_code == 201
    again = await client.post(url, json={"email": "a@example.org"}, headers=auth(world.admin))
    assert again.status_code == 400
    await background.engine.broker.wait_all()
    [mail] = await all_rows(client._transport.app, OutgoingMail)
    await settle(client._transport.app, mail.job_id)
    assert len(smtp.envelopes) == 1


async def test_a_waiting_list_voucher_is_mailed_from_the_event(
    client, background, smtp, world: World, factory
):
    from tests.vouchers import helpers as h
    from tests.waitinglist.test_waitinglist import _entry, _sold_out

    ticket, quota = await _sold_out(factory, world)
    entry = (await _entry(client, world, ticket.id, name="Ada <b>Lovelace</b>")).json()
    await client.patch(f"{h.QUOTAS}{quota.id}/", json={"size": 1}, headers=auth(world.admin))
    sent = await client.post(f"{h.ENTRIES}{entry['id']}/send_voucher/", headers=auth(world.admin))
    assert sent.status_code == 204, sent.text
    app = client._transport.app
    [mail] = await all_rows(app, OutgoingMail)
    assert (await settle(app, mail.job_id)).status == "finished"
    [message] = smtp.messages
    assert message["From"].addresses[0].display_name == "Summit"
    assert message["To"] == "wait@example.org"
    text = message.get_body(("plain",)).get_content()
    assert text.startswith("Hello Ada <b>Lovelace</b>,")
    assert text == mail.body
    html = message.get_body(("html",)).get_content()
    assert "Hello Ada &lt;b&gt;Lovelace&lt;/b&gt;," in html
    voucher = (await client.get(f"{h.ENTRIES}{entry['id']}/", headers=auth(world.admin))).json()
    code = (
        await client.get(f"{h.VOUCHERS}{voucher['voucher']}/", headers=auth(world.admin))
    ).json()["code"]
    assert code in text and code in html
    assert (await job_row(app, mail.job_id)).event_id == world.event.id
