"""An event full of personal data (orders through the API; file answers, scans and rendered
tickets written straight to the database and the file store), and the shredder URLs."""

from __future__ import annotations

import asyncio
import datetime as dt
import io
import time
import uuid
import zipfile
from dataclasses import dataclass, field
from typing import Any

import httpx
from sqlalchemy import select, update

from admit.db import utcnow
from admit.jobs.queue import new_job_values
from admit.models import (
    Answer,
    Checkin,
    CheckinList,
    Event,
    Job,
    Order,
    OrderFee,
    OrderPayment,
    OrderPosition,
    TicketFile,
    UploadedFile,
)
from tests.factories import Factory, World, auth
from tests.orders import helpers as h

ALL = [
    "order_emails",
    "phone_numbers",
    "attendee_info",
    "invoice_addresses",
    "question_answers",
    "checkin_data",
    "canceled_orders",
    "cachedtickets",
]
FILE_CONTENT = b"%PDF-1.4 a passport scan\n"
TICKET_CONTENT = b"%PDF-1.4 a rendered ticket for Ada Lovelace\n"


def url(world: World, rest: str = "", event: Event | None = None) -> str:
    slug = (event or world.event).slug
    return f"/api/v1/organizers/{world.org.slug}/events/{slug}/shredders/{rest}"


def path_of(absolute: str) -> str:
    """The path of an absolute URL the API answered with."""
    assert absolute.startswith("http://testserver/api/v1/"), absolute
    return absolute.removeprefix("http://testserver")


async def end_event(factory: Factory, event: Event, *, live: bool = False, **dates: Any) -> None:
    """Moves the event into the past (and sets ``live``)."""
    now = utcnow()
    values = {
        "date_from": now - dt.timedelta(days=3),
        "date_to": now - dt.timedelta(days=2),
        "live": live,
    }
    values.update(dates)
    async with factory.sessionmaker() as session:
        await session.execute(update(Event).where(Event.id == event.id).values(**values))
        await session.commit()


@dataclass
class Sample:
    """What :func:`populate` wrote."""

    paid: str  # order code: paid, every kind of personal data
    canceled: str  # order code: canceled, personal data too
    plain: str  # order code: paid, no personal data at all
    upload_key: str
    ticket_key: str
    ticket_job: int
    checkins: list[int] = field(default_factory=list)


async def populate(client: httpx.AsyncClient, app: Any, world: World, factory: Factory) -> Sample:
    rule = await h.tax_rule(factory, world.event, "19.00")
    item = await h.item(factory, world.event, "100.00", tax_rule_id=rule.id)
    diet = await h.question(factory, world.event, [item], "S", identifier="DIET")
    size = await h.question(factory, world.event, [item], "C", options=["S", "L"], identifier="SZ")
    passport = await h.question(factory, world.event, [item], "F", identifier="PASS")
    options = (
        await client.get(
            f"/api/v1/organizers/acme/events/summit/questions/{size.id}/", headers=auth(world.admin)
        )
    ).json()["options"]

    def position(name: str, email: str) -> dict[str, Any]:
        return {
            "item": item.id,
            "attendee_name": name,
            "attendee_email": email,
            "company": "Analytical Engines Ltd",
            "street": "1 Byron Street",
            "zipcode": "W1",
            "city": "London",
            "country": "GB",
            "state": "",
            "answers": [
                {"question": diet.id, "answer": "vegan"},
                {"question": size.id, "answer": "", "options": [options[1]["id"]]},
            ],
        }

    orders = f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/orders/"
    paid = await client.post(
        orders,
        json={
            "status": "p",
            "payment_provider": "manual",
            "email": "ada@example.org",
            "phone": "+442071234567",
            "comment": "Prefers the front row",
            "send_email": True,
            "invoice_address": {
                "company": "ACME",
                "street": "Main 1",
                "city": "Berlin",
                "zipcode": "10115",
                "country": "DE",
                "is_business": True,
            },
            "fees": [{"fee_type": "service", "value": "2.50"}],
            "positions": [
                position("Ada Lovelace", "ada@example.org"),
                position("Charles Babbage", "charles@example.org"),
            ],
        },
        headers=auth(world.admin),
    )
    assert paid.status_code == 201, paid.text
    canceled = await client.post(
        orders,
        json={
            "email": "grace@example.org",
            "phone": "+15550100",
            "invoice_address": {"name": "Grace Hopper", "city": "Arlington", "country": "US"},
            "positions": [position("Grace Hopper", "grace@example.org")],
        },
        headers=auth(world.admin),
    )
    assert canceled.status_code == 201, canceled.text
    code = canceled.json()["code"]
    answer = await client.post(f"{orders}{code}/mark_canceled/", json={}, headers=auth(world.admin))
    assert answer.status_code == 200, answer.text
    plain = await client.post(
        orders,
        json={"status": "p", "payment_provider": "manual", "positions": [{"item": item.id}]},
        headers=auth(world.admin),
    )
    assert plain.status_code == 201, plain.text

    store = app.state.background.store
    sample = Sample(
        paid=paid.json()["code"],
        canceled=code,
        plain=plain.json()["code"],
        upload_key=f"uploads/{uuid.uuid4().hex}",
        ticket_key=f"jobs/{uuid.uuid4().hex}/ticket",
        ticket_job=0,
    )
    async with store.writer(sample.upload_key) as handle:
        handle.write(FILE_CONTENT)
    async with store.writer(sample.ticket_key) as handle:
        handle.write(TICKET_CONTENT)
    async with factory.sessionmaker() as session:
        first = (
            await session.execute(
                select(OrderPosition)
                .join(Order, Order.id == OrderPosition.order_id)
                .where(Order.code == sample.paid, OrderPosition.positionid == 1)
            )
        ).scalar_one()
        upload = UploadedFile(
            uuid=uuid.uuid4().hex,
            owner_kind="token",
            owner_id=1,
            filename="passport.pdf",
            content_type="application/pdf",
            size=len(FILE_CONTENT),
            key=sample.upload_key,
        )
        session.add(upload)
        session.add(
            Answer(
                orderposition_id=first.id,
                question_id=passport.id,
                answer="file",
                file=f"file:{upload.uuid}",
            )
        )
        checkin_list = CheckinList(event_id=world.event.id, name="Door", rules={})
        session.add(checkin_list)
        await session.flush()
        scans = [
            Checkin(
                event_id=world.event.id,
                list_id=checkin_list.id,
                position_id=first.id,
                seq=1,
                type="entry",
                device_id=7,
                device_number=1,
                gate_id=3,
                raw_barcode="secret-1",
                nonce="n1",
            ),
            Checkin(
                event_id=world.event.id,
                list_id=checkin_list.id,
                position_id=None,
                successful=False,
                error_reason="invalid",
                raw_barcode="ID CARD: ADA L.",
                device_id=7,
                device_number=1,
            ),
            Checkin(
                event_id=world.event.id,
                list_id=checkin_list.id,
                position_id=first.id,
                seq=2,
                type="exit",
                datetime=utcnow() - dt.timedelta(hours=1),
            ),
        ]
        session.add_all(scans)
        values = new_job_values("noop", {}, organizer_id=world.org.id, event_id=world.event.id)
        job = Job(
            **{
                **values,
                "status": "finished",
                "result_key": sample.ticket_key,
                "result_name": "ticket.pdf",
                "result_type": "application/pdf",
                "expires": utcnow() + dt.timedelta(days=1),
            }
        )
        session.add(job)
        await session.flush()
        session.add(
            TicketFile(
                event_id=world.event.id,
                target=f"position:{first.id}",
                fingerprint="f" * 64,
                job_id=job.id,
            )
        )
        await session.commit()
        sample.ticket_job = job.id
        sample.checkins = [s.id for s in scans]
    return sample


async def ledger_rows(factory: Factory, event: Event) -> dict[str, Any]:
    """Everything tax law and the sales ledger need, to compare before and after."""
    async with factory.sessionmaker() as session:
        orders = (
            await session.execute(
                select(
                    Order.code,
                    Order.status,
                    Order.total,
                    Order.datetime,
                    Order.secret,
                    Order.expires,
                    Order.cancellation_date,
                )
                .where(Order.event_id == event.id)
                .order_by(Order.code)
            )
        ).all()
        positions = (
            await session.execute(
                select(
                    OrderPosition.order_id,
                    OrderPosition.positionid,
                    OrderPosition.item_id,
                    OrderPosition.variation_id,
                    OrderPosition.price,
                    OrderPosition.tax_rate,
                    OrderPosition.tax_value,
                    OrderPosition.tax_rule_id,
                    OrderPosition.secret,
                    OrderPosition.canceled,
                )
                .where(OrderPosition.event_id == event.id)
                .order_by(OrderPosition.id)
            )
        ).all()
        fees = (
            await session.execute(
                select(OrderFee.order_id, OrderFee.fee_type, OrderFee.value, OrderFee.tax_value)
                .join(Order, Order.id == OrderFee.order_id)
                .where(Order.event_id == event.id)
                .order_by(OrderFee.id)
            )
        ).all()
        payments = (
            await session.execute(
                select(OrderPayment.order_id, OrderPayment.amount, OrderPayment.state)
                .join(Order, Order.id == OrderPayment.order_id)
                .where(Order.event_id == event.id)
                .order_by(OrderPayment.id)
            )
        ).all()
        scans = (
            await session.execute(
                select(
                    Checkin.id,
                    Checkin.position_id,
                    Checkin.type,
                    Checkin.datetime,
                    Checkin.successful,
                    Checkin.list_id,
                    Checkin.seq,
                )
                .where(Checkin.event_id == event.id)
                .order_by(Checkin.id)
            )
        ).all()
    return {
        "orders": orders,
        "positions": positions,
        "fees": fees,
        "payments": payments,
        "checkins": scans,
    }


async def poll(
    client: httpx.AsyncClient, path: str, token: str, *, seconds: float = 20
) -> httpx.Response:
    """GETs ``path`` until it answers something other than 409."""
    deadline = time.monotonic() + seconds
    while True:
        response = await client.get(path, headers=auth(token))
        if response.status_code != 409:
            return response
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} still 409 after {seconds} s: {response.text}")
        await asyncio.sleep(0.05)


def unzip(content: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


async def job_by_uuid(app: Any, uuid_: str) -> Job:
    async with app.state.db.sessionmaker() as session:
        return (await session.execute(select(Job).where(Job.uuid == uuid_))).scalar_one()


async def run_job(app: Any, uuid_: str) -> Job:
    """Runs one job here and now (no engine needed), as a worker would."""
    job = await job_by_uuid(app, uuid_)
    assert await app.state.background.engine.run(job.id)
    return await job_by_uuid(app, uuid_)


async def set_job(app: Any, uuid_: str, **values: Any) -> None:
    async with app.state.db.sessionmaker() as session:
        await session.execute(update(Job).where(Job.uuid == uuid_).values(**values))
        await session.commit()


def ids_of(absolute: str) -> tuple[str, str]:
    """The two opaque values at the end of a shredder URL."""
    parts = absolute.rstrip("/").split("/")
    return parts[-2], parts[-1]
