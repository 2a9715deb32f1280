"""Export → shred → status on an event full of personal data: the export holds exactly what
the database held, afterwards the data is gone from the rows and the file store, what the
ledger and tax law need is unchanged, and the export is gone (download 404)."""

from __future__ import annotations

import json

from sqlalchemy import func, select

from admit.models import (
    Answer,
    Checkin,
    Job,
    Notification,
    Order,
    OrderPosition,
    OutgoingMail,
    TicketFile,
    UploadedFile,
)
from tests.factories import auth
from tests.shredders import helpers as sh


async def _orders(factory, event_id):
    async with factory.sessionmaker() as session:
        return {
            o.code: o
            for o in (await session.scalars(select(Order).where(Order.event_id == event_id)))
        }


async def _positions(factory, event_id):
    async with factory.sessionmaker() as session:
        rows = await session.execute(
            select(Order.code, OrderPosition)
            .join(Order, Order.id == OrderPosition.order_id)
            .where(OrderPosition.event_id == event_id)
            .order_by(OrderPosition.id)
        )
        return {f"{code}-{p.positionid}": p for code, p in rows}


async def test_export_then_shred_everything(client, background, world, factory):
    app = client._transport.app
    sample = await sh.populate(client, app, world, factory)
    await sh.end_event(factory, world.event)
    orders = await _orders(factory, world.event.id)
    positions = await _positions(factory, world.event.id)
    before = await sh.ledger_rows(factory, world.event)
    async with factory.sessionmaker() as session:
        notifications = await session.scalar(select(func.count()).select_from(Notification))
        mails = (
            await session.scalars(
                select(OutgoingMail).where(OutgoingMail.event_id == world.event.id)
            )
        ).all()
    assert mails, "the paid order's confirmation is in the outbox"

    started = await client.post(
        sh.url(world, "export/"), json={"shredders": sh.ALL}, headers=auth(world.admin)
    )
    assert started.status_code == 202, started.text
    links = started.json()
    assert set(links) == {"download", "shred"}
    download = await sh.poll(client, sh.path_of(links["download"]), world.admin)
    assert download.status_code == 200, download.text
    assert download.headers["content-type"] == "application/zip"
    assert "shredder-export" in download.headers["content-disposition"]
    files = sh.unzip(download.content)

    # The export holds exactly what the database holds.
    manifest = json.loads(files["manifest.json"])
    assert set(manifest["shredders"]) == set(sh.ALL)
    assert manifest["organizer"] == "acme" and manifest["event"] == "summit"
    emails = json.loads(files["order_emails/orders.json"])
    assert emails == {c: o.email for c, o in orders.items() if o.email}
    assert set(emails) == {sample.paid, sample.canceled}
    attendee_emails = json.loads(files["order_emails/attendees.json"])
    assert attendee_emails == {
        k: p.attendee_email for k, p in positions.items() if p.attendee_email
    }
    assert len(attendee_emails) == 3
    mail_log = json.loads(files["order_emails/mails.json"])
    assert [m["to"] for m in mail_log] == [m.to for m in mails]
    assert mail_log[0]["body"] == mails[0].body
    phones = json.loads(files["phone_numbers/orders.json"])
    assert phones == {sample.paid: "+442071234567", sample.canceled: "+15550100"}
    addresses = json.loads(files["invoice_addresses/orders.json"])
    assert addresses == {c: o.invoice_address for c, o in orders.items() if o.invoice_address}
    assert addresses[sample.paid]["company"] == "ACME"
    attendees = json.loads(files["attendee_info/attendees.json"])
    assert set(attendees) == {k for k, p in positions.items() if p.attendee_name_cached}
    ada = attendees[f"{sample.paid}-1"]
    assert ada["name"] == "Ada Lovelace" and ada["email"] == "ada@example.org"
    assert (ada["company"], ada["street"], ada["zipcode"], ada["city"], ada["country"]) == (
        "Analytical Engines Ltd",
        "1 Byron Street",
        "W1",
        "London",
        "GB",
    )
    assert ada["name_parts"] == positions[f"{sample.paid}-1"].attendee_name_parts
    answers = json.loads(files["question_answers/answers.json"])
    assert set(answers) == {f"{sample.paid}-1", f"{sample.paid}-2", f"{sample.canceled}-1"}
    first = answers[f"{sample.paid}-1"]
    assert [a["question_identifier"] for a in first] == ["DIET", "SZ", "PASS"]
    assert first[0]["answer"] == "vegan"
    assert first[1]["option_identifiers"] == ["O1"] and first[1]["answer"] == "L"
    assert files[f"question_answers/{first[2]['file']}"] == sh.FILE_CONTENT
    assert first[2]["file"].endswith("passport.pdf")
    scans = json.loads(files["checkin_data/checkins.json"])
    assert [s["id"] for s in scans] == sample.checkins[:2]  # the third held no device data
    assert scans[0]["position"] == f"{sample.paid}-1"
    assert (scans[0]["device"], scans[0]["gate"], scans[0]["raw_barcode"]) == (7, 3, "secret-1")
    assert scans[1]["raw_barcode"] == "ID CARD: ADA L." and scans[1]["position"] is None
    canceled = json.loads(files["canceled_orders/orders.json"])
    assert canceled == {
        sample.canceled: {
            "status": "c",
            "email": "grace@example.org",
            "phone": "+15550100",
            "invoice_address": orders[sample.canceled].invoice_address,
            "comment": "",
        }
    }
    assert set(json.loads(files["canceled_orders/attendees.json"])) == {f"{sample.canceled}-1"}
    assert set(json.loads(files["canceled_orders/answers.json"])) == {f"{sample.canceled}-1"}
    assert not [n for n in files if n.startswith("cachedtickets/")]

    # Shred.
    shred = await client.post(sh.path_of(links["shred"]), headers=auth(world.admin))
    assert shred.status_code == 202, shred.text
    status_url = sh.path_of(shred.json()["status"])
    assert "/shredders/status/" in status_url
    status = await sh.poll(client, status_url, world.admin)
    assert status.status_code == 200, status.text
    assert status.json() == {"status": "finished"}

    # The personal data is gone from the rows ...
    after_orders = await _orders(factory, world.event.id)
    for order in after_orders.values():
        assert (order.email, order.phone, order.invoice_address) == (None, None, None)
    assert after_orders[sample.canceled].comment == ""
    assert after_orders[sample.paid].comment == "Prefers the front row"  # not canceled: kept
    for pos in (await _positions(factory, world.event.id)).values():
        assert pos.attendee_name_parts == {} and pos.attendee_name_cached is None
        assert pos.attendee_email is None
        assert (pos.company, pos.street, pos.zipcode, pos.city, pos.country, pos.state) == (
            (None,) * 6
        )
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(Answer)) == 0
        assert await session.scalar(select(func.count()).select_from(UploadedFile)) == 0
        assert (
            await session.scalar(
                select(func.count())
                .select_from(OutgoingMail)
                .where(OutgoingMail.event_id == world.event.id)
            )
            == 0
        )
        scans_after = (await session.scalars(select(Checkin).order_by(Checkin.id))).all()
        assert await session.scalar(select(func.count()).select_from(TicketFile)) == 0
        assert await session.get(Job, sample.ticket_job) is None
        # ... no webhook is announced for it ...
        assert await session.scalar(select(func.count()).select_from(Notification)) == notifications
    for scan in scans_after:
        assert (scan.device_id, scan.device_number, scan.gate_id, scan.raw_barcode) == ((None,) * 4)
    # ... and from the file store.
    store = background.store
    assert await store.size(sample.upload_key) is None
    assert await store.size(sample.ticket_key) is None

    # What tax law and the ledger need, and the fact and time of entries, are unchanged.
    assert await sh.ledger_rows(factory, world.event) == before

    # The export is gone with its file; shredding it again finds nothing.
    gone = await client.get(sh.path_of(links["download"]), headers=auth(world.admin))
    assert gone.status_code == 404, gone.text
    async with factory.sessionmaker() as session:
        kinds = (await session.scalars(select(Job.kind))).all()
    assert "shred.export" not in kinds
    again = await client.post(sh.path_of(links["shred"]), headers=auth(world.admin))
    assert again.status_code == 404
    # The status stays readable (about an hour).
    assert (await client.get(status_url, headers=auth(world.admin))).status_code == 200

    # The orders still read through the API, without the personal data.
    order = await client.get(
        f"/api/v1/organizers/acme/events/summit/orders/{sample.paid}/", headers=auth(world.admin)
    )
    assert order.status_code == 200, order.text
    body = order.json()
    assert body["email"] is None and body["total"] == "202.50"
    assert all(p["attendee_name"] is None for p in body["positions"])
    assert all(p["answers"] == [] for p in body["positions"])


async def test_one_shredder_touches_only_its_data(client, background, world, factory):
    app = client._transport.app
    sample = await sh.populate(client, app, world, factory)
    await sh.end_event(factory, world.event)
    started = await client.post(
        sh.url(world, "export/"),
        json={"shredders": ["canceled_orders"]},
        headers=auth(world.admin),
    )
    links = started.json()
    download = await sh.poll(client, sh.path_of(links["download"]), world.admin)
    assert download.status_code == 200
    assert set(sh.unzip(download.content)) == {
        "manifest.json",
        "canceled_orders/orders.json",
        "canceled_orders/attendees.json",
        "canceled_orders/answers.json",
    }
    shred = await client.post(sh.path_of(links["shred"]), headers=auth(world.admin))
    status = await sh.poll(client, sh.path_of(shred.json()["status"]), world.admin)
    assert status.status_code == 200, status.text
    orders = await _orders(factory, world.event.id)
    assert orders[sample.canceled].email is None and orders[sample.canceled].phone is None
    assert orders[sample.paid].email == "ada@example.org"
    assert orders[sample.paid].invoice_address["company"] == "ACME"
    positions = await _positions(factory, world.event.id)
    assert positions[f"{sample.canceled}-1"].attendee_name_cached is None
    assert positions[f"{sample.paid}-1"].attendee_name_cached == "Ada Lovelace"
    async with factory.sessionmaker() as session:
        left = (
            await session.execute(
                select(Order.code, func.count())
                .join(OrderPosition, OrderPosition.order_id == Order.id)
                .join(Answer, Answer.orderposition_id == OrderPosition.id)
                .group_by(Order.code)
            )
        ).all()
        scans = (await session.scalars(select(Checkin).order_by(Checkin.id))).all()
    assert dict(left) == {sample.paid: 5}  # 2 + 2 answers, and the file answer
    assert scans[0].device_id == 7  # check-in data is another shredder's
    assert await background.store.size(sample.upload_key) is not None
