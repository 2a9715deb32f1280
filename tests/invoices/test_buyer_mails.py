"""The buyer's paid and canceled mails through a real SMTP server: the tickets and the
invoice PDF attached (read back with pypdf), the invoice issued by the payment itself; and
the shop's order page: the invoice download behind the order's secret, and the request form."""

from __future__ import annotations

import io

from pypdf import PdfReader
from sqlalchemy import select

from admit.models import Invoice, Job, OutgoingMail
from admit.shop.buyer_mails import KIND
from tests.factories import World, auth
from tests.invoices import helpers as ih
from tests.mail.conftest import Mailbox, settle
from tests.oauth.helpers import csrf
from tests.shop import helpers as h


async def _bank_order(client, world: World) -> tuple[str, str]:
    """A pending order of two tickets placed in the shop: (code, the order page's path)."""
    r = await h.cart(client, world, {"item": _ticket_id(world), "count": 2})
    assert r.status_code in (200, 201), r.text
    r = await h.buy(client, world, r.json()["cart_id"], payment_provider="banktransfer")
    assert r.status_code in (200, 201), r.text
    body = r.json()
    return body["code"], "/" + body["url"].split("/", 3)[3]


def _ticket_id(world: World) -> int:
    return world.shop.ticket.id  # type: ignore[attr-defined]


async def _jobs(app, kind: str) -> list[Job]:
    async with app.state.db.sessionmaker() as session:
        return list(await session.scalars(select(Job).where(Job.kind == kind).order_by(Job.id)))


async def _deliver_buyer_mails(app) -> list[OutgoingMail]:
    """Runs the buyer-mail jobs, then the delivery of the mails they queued."""
    for job in await _jobs(app, KIND):
        done = await settle(app, job.id)
        assert done.status == "finished", done.message
    async with app.state.db.sessionmaker() as session:
        mails = list(await session.scalars(select(OutgoingMail).order_by(OutgoingMail.id)))
    for mail in mails:
        if mail.status == "queued":
            done = await settle(app, mail.job_id)
            assert done.status == "finished", done.message
    return mails


def _pdf_text(data: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


async def test_paid_mail_attaches_tickets_and_the_invoice_issued_on_payment(
    client, background, smtp: Mailbox, world: World, factory
):
    world.shop = await h.setup(  # type: ignore[attr-defined]
        factory, world, invoice_generate="paid", **ih.ISSUER
    )
    app = client._transport.app
    code, _ = await _bank_order(client, world)
    r = await ih.action(client, world, code, "mark_paid", {"send_email": True})
    assert r.status_code == 200, r.text
    [invoice] = await ih.invoices(client, world)
    assert invoice["order"] == code
    await _deliver_buyer_mails(app)

    paid = [m for m in smtp.messages if "Payment received" in m["Subject"]]
    assert len(paid) == 1, [m["Subject"] for m in smtp.messages]
    message = paid[0]
    assert message["To"] == "buyer@example.org" and code in message["Subject"]
    text = message.get_body(("plain",)).get_content()
    assert invoice["number"] in text and f"/order/{code}/" in text
    files = {part.get_filename(): part.get_content() for part in message.iter_attachments()}
    invoice_name = f"{invoice['number']}.pdf"
    tickets = [name for name in files if name != invoice_name]
    assert invoice_name in files and len(tickets) == 1, list(files)
    assert all(part.get_content_type() == "application/pdf" for part in message.iter_attachments())
    invoice_text = _pdf_text(files[invoice_name])
    assert invoice["number"] in invoice_text and "Acme Events GmbH" in invoice_text
    assert "54.74" in invoice_text or "46.00" in invoice_text  # the order's total
    ticket_pages = PdfReader(io.BytesIO(files[tickets[0]])).pages
    assert len(ticket_pages) == 2  # one page per ticket


async def test_no_paid_mail_when_not_wanted_and_no_invoice_when_not_attached(
    client, background, smtp: Mailbox, world: World, factory
):
    world.shop = await h.setup(  # type: ignore[attr-defined]
        factory, world, invoice_generate="paid", invoice_email_attachment=False, **ih.ISSUER
    )
    app = client._transport.app
    quiet, _ = await _bank_order(client, world)
    r = await ih.action(client, world, quiet, "mark_paid")  # send_email: false by default
    assert r.status_code == 200, r.text
    assert await _jobs(app, KIND) == []
    loud, _ = await _bank_order(client, world)
    r = await ih.action(client, world, loud, "mark_paid", {"send_email": True})
    assert r.status_code == 200, r.text
    await _deliver_buyer_mails(app)
    [message] = [m for m in smtp.messages if "Payment received" in m["Subject"]]
    assert loud in message["Subject"]
    names = [part.get_filename() for part in message.iter_attachments()]
    assert len(names) == 1 and loud in names[0]  # the tickets only, no invoice


async def test_canceled_mail_names_the_cancellation_invoice(
    client, background, smtp: Mailbox, world: World, factory
):
    world.shop = await h.setup(  # type: ignore[attr-defined]
        factory, world, invoice_generate="True", **ih.ISSUER
    )
    app = client._transport.app
    code, _ = await _bank_order(client, world)
    r = await ih.action(client, world, code, "mark_canceled", {"send_email": True})
    assert r.status_code == 200, r.text
    numbers = {i["number"]: i for i in await ih.invoices(client, world)}
    [cancellation] = [n for n, i in numbers.items() if i["is_cancellation"]]
    await _deliver_buyer_mails(app)
    [message] = [m for m in smtp.messages if "has been canceled" in m["Subject"]]
    assert code in message["Subject"] and len(smtp.messages) == 2  # the placed mail before
    assert cancellation in message.get_body(("plain",)).get_content()
    assert list(message.iter_attachments()) == []


async def test_order_page_offers_the_invoice_behind_the_secret(
    client, background, world: World, factory
):
    world.shop = await h.setup(  # type: ignore[attr-defined]
        factory, world, invoice_generate="True", **ih.ISSUER
    )
    _, page_url = await _bank_order(client, world)
    page = await client.get(page_url)
    assert page.status_code == 200
    [invoice] = await ih.invoices(client, world)
    async with factory.sessionmaker() as session:
        invoice_id = await session.scalar(
            select(Invoice.id).where(Invoice.full_invoice_no == invoice["number"])
        )
    link = f"{page_url}invoices/{invoice_id}.pdf"
    assert f'href="{link}"' in page.text and invoice["number"] in page.text
    assert "Request an invoice" not in page.text
    r = await client.get(link)  # served at once, rendered or not
    assert r.status_code == 200 and r.headers["content-type"] == "application/pdf"
    assert invoice["number"] in _pdf_text(r.content)
    wrong = page_url.rstrip("/").rsplit("/", 1)[0] + "/" + "a" * 16 + "/"
    assert (await client.get(f"{wrong}invoices/{invoice_id}.pdf")).status_code == 404
    # another order's page does not serve this invoice
    _, other_url = await _bank_order(client, world)
    assert (await client.get(f"{other_url}invoices/{invoice_id}.pdf")).status_code == 404
    assert (await client.get(f"{page_url}invoices/{invoice_id + 999}.pdf")).status_code == 404


async def test_the_buyer_requests_an_invoice(client, background, world: World, factory):
    world.shop = await h.setup(  # type: ignore[attr-defined]
        factory, world, invoice_generate="user", **ih.ISSUER
    )
    code, page_url = await _bank_order(client, world)
    page = await client.get(page_url)
    assert "Request an invoice" in page.text
    assert await ih.invoices(client, world) == []
    r = await client.post(f"{page_url}invoice", data={})
    assert r.status_code == 403  # no CSRF token
    assert await ih.invoices(client, world) == []
    r = await client.post(f"{page_url}invoice", data={"csrf_token": csrf(page.text)})
    assert r.status_code == 303
    [invoice] = await ih.invoices(client, world)
    assert invoice["order"] == code
    page = await client.get(page_url)
    assert invoice["number"] in page.text and "Request an invoice" not in page.text
    # asked again (an old form): still one invoice
    r = await client.post(f"{page_url}invoice", data={"csrf_token": csrf(page.text)})
    assert r.status_code == 303 and len(await ih.invoices(client, world)) == 1


async def test_the_request_form_sent_many_times_at_once_issues_one_invoice(
    client, background, world: World, factory, database_url
):
    """The form clicked again and again at once: the page takes the order's row lock and
    issues through the API's path (``service.issue_on_request``), so one invoice; the other
    requests waited for that lock (seen in PostgreSQL) and found it issued."""
    import asyncio

    import pytest

    from tests.lock_waits import PG_ONLY, lock_waits

    if not database_url.startswith("postgresql"):
        pytest.skip(PG_ONLY)
    world.shop = await h.setup(  # type: ignore[attr-defined]
        factory, world, invoice_generate="user", **ih.ISSUER
    )
    _, page_url = await _bank_order(client, world)
    token = csrf((await client.get(page_url)).text)
    async with lock_waits(factory) as waiting_seen:
        answers = await asyncio.gather(
            *(client.post(f"{page_url}invoice", data={"csrf_token": token}) for _ in range(8))
        )
    assert [a.status_code for a in answers] == [303] * 8, [a.text for a in answers]
    assert len(await ih.invoices(client, world)) == 1
    assert max(waiting_seen) >= 1, waiting_seen  # the requests did meet at the order's lock


async def test_one_order_marked_paid_many_times_at_once_queues_one_paid_mail(
    client, background, world: World, factory, database_url
):
    """``mark_paid`` with ``send_email`` sent 8 times at once for one order: the order's row
    lock lets one make it paid (its paid hook queues the mail); the others waited for that lock
    (seen in PostgreSQL), then found it paid (400) and queued nothing."""
    import asyncio

    import pytest

    from tests.lock_waits import PG_ONLY, lock_waits

    if not database_url.startswith("postgresql"):
        pytest.skip(PG_ONLY)
    world.shop = await h.setup(factory, world)  # type: ignore[attr-defined]
    code, _ = await _bank_order(client, world)
    async with lock_waits(factory) as waiting_seen:
        answers = await asyncio.gather(
            *(ih.action(client, world, code, "mark_paid", {"send_email": True}) for _ in range(8))
        )
    statuses = sorted(a.status_code for a in answers)
    assert statuses.count(200) == 1 and set(statuses) <= {200, 400, 409}, statuses
    jobs = await _jobs(client._transport.app, KIND)
    assert [j.input["kind"] for j in jobs] == ["paid"], [j.input for j in jobs]
    assert max(waiting_seen) >= 1, waiting_seen  # the requests did meet at the order's lock


async def test_request_refused_where_the_event_does_not_issue_on_request(
    client, background, world: World, factory
):
    world.shop = await h.setup(  # type: ignore[attr-defined]
        factory, world, invoice_generate="admin", **ih.ISSUER
    )
    _, page_url = await _bank_order(client, world)
    page = await client.get(page_url)
    assert "Request an invoice" not in page.text
    r = await client.post(f"{page_url}invoice", data={"csrf_token": csrf(page.text)})
    assert r.status_code == 303
    assert await ih.invoices(client, world) == []
    url = f"/api/v1/organizers/{world.org.slug}/invoices/"
    r = await client.get(url, headers=auth(world.admin))
    assert r.status_code == 200 and r.json()["count"] == 0


async def test_cancel_on_the_order_page_mails_the_buyer(
    client, background, smtp: Mailbox, world: World, factory
):
    world.shop = await h.setup(factory, world, cancel_allow_user=True)  # type: ignore[attr-defined]
    app = client._transport.app
    code, page_url = await _bank_order(client, world)
    page = await client.get(page_url)
    assert code in page.text
    r = await client.post(f"{page_url}cancel", data={"csrf_token": csrf(page.text)})
    assert r.status_code == 303
    [job] = await _jobs(app, KIND)
    assert job.input["kind"] == "canceled" and job.input["base"] == "http://testserver"
    await _deliver_buyer_mails(app)
    [message] = [m for m in smtp.messages if "has been canceled" in m["Subject"]]
    assert f"http://testserver{page_url}" in message.get_body(("plain",)).get_content()
