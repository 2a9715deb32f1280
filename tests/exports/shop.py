"""An event with a catalog, questions of every kind and orders in every state, for the
order exporters; orders are placed through the API, as a client would."""

from __future__ import annotations

import asyncio
import csv
import datetime as dt
import io
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import openpyxl
from sqlalchemy import select, update

from admit.models import Event, Question, QuestionOption
from tests.factories import Factory, World, auth
from tests.orders import helpers as h

EXPORT_TIMEOUT = 30.0


@dataclass
class Shop:
    ticket: Any
    workshop: Any
    morning: Any
    questions: dict[str, Question]
    options: dict[str, list[QuestionOption]]
    orders: list[dict[str, Any]] = field(default_factory=list)

    def order(self, code: str) -> dict[str, Any]:
        return next(o for o in self.orders if o["code"] == code)


def orders_url(world: World, event: Any = None) -> str:
    event = event or world.event
    return f"/api/v1/organizers/{world.org.slug}/events/{event.slug}/orders/"


async def question(
    factory: Factory, event: Any, items: list[Any], kind: str, identifier: str, text: dict, **kw
) -> Question:
    q = await h.question(factory, event, items, kind, identifier=identifier, **kw)
    async with factory.sessionmaker() as s:
        await s.execute(update(Question).where(Question.id == q.id).values(question=text))
        await s.commit()
    return q


async def build_shop(client: Any, factory: Factory, world: World, event: Any = None) -> Shop:
    """Two products (one with variations), six questions, four orders: paid with an invoice
    address and a fee, pending, canceled, and paid with an add-on."""
    event = event or world.event
    async with factory.sessionmaker() as s:
        await s.execute(update(Event).where(Event.id == event.id).values(timezone="Europe/Berlin"))
        await s.commit()
    rule = await h.tax_rule(factory, event, "19.00")
    ticket = await h.item(factory, event, "23.00", name="Ticket", tax_rule_id=rule.id)
    workshop = await h.item(factory, event, "10.50", name="Workshop")
    quota = await h.quota_of(factory, workshop.id)
    morning = await h.variation(factory, workshop, "12.00", quota.id)
    both = [ticket, workshop]
    questions = {
        "AGE": await question(
            factory, event, both, "N", "AGE", {"en": "Age", "de": "Alter"}, position=1
        ),
        "DIET": await question(
            factory, event, [ticket], "S", "DIET", {"en": "Diet", "de": "Ernährung"}, position=2
        ),
        "SHIRT": await question(
            factory, event, [ticket], "C", "SHIRT", {"en": "Shirt", "de": "Hemd"},
            options=["S", "M", "L"], position=3,
        ),
        "TOPICS": await question(
            factory, event, [ticket], "M", "TOPICS", {"en": "Topics", "de": "Themen"},
            options=["Music", "Art", "Tech"], position=4,
        ),
        "NEWS": await question(
            factory, event, [ticket], "B", "NEWS", {"en": "Newsletter"}, position=5
        ),
        "BIRTH": await question(
            factory, event, [ticket], "D", "BIRTH", {"en": "Birthday"}, position=6
        ),
    }  # fmt: skip
    options: dict[str, list[QuestionOption]] = {}
    async with factory.sessionmaker() as s:
        for key in ("SHIRT", "TOPICS"):
            found = await s.scalars(
                select(QuestionOption)
                .where(QuestionOption.question_id == questions[key].id)
                .order_by(QuestionOption.position)
            )
            options[key] = list(found)
    shop = Shop(ticket, workshop, morning, questions, options)

    def answers(age: int, diet: str, shirt: int, topics: list[int], news: bool) -> list[dict]:
        return [
            {"question": questions["AGE"].id, "answer": str(age)},
            {"question": questions["DIET"].id, "answer": diet},
            {"question": questions["SHIRT"].id, "options": [options["SHIRT"][shirt].id]},
            {
                "question": questions["TOPICS"].id,
                "options": [options["TOPICS"][i].id for i in topics],
            },
            {"question": questions["NEWS"].id, "answer": "true" if news else "false"},
            {"question": questions["BIRTH"].id, "answer": "1990-04-01"},
        ]

    bodies = [
        {
            "status": "p",
            "payment_provider": "banktransfer",
            "email": "ada@example.org",
            "phone": "+49301234567",
            "locale": "de",
            "comment": "VIP",
            "invoice_address": {
                "company": "Analytical Engines Ltd",
                "name": "Ada Lovelace",
                "street": "1 Engine Road",
                "zipcode": "10115",
                "city": "Berlin",
                "country": "DE",
                "vat_id": "DE123456789",
            },
            "fees": [{"fee_type": "service", "value": "2.50", "description": "Handling"}],
            "positions": [
                {
                    "item": ticket.id,
                    "attendee_name": "Ada Lovelace",
                    "attendee_email": "ada@example.org",
                    "company": "Analytical Engines Ltd",
                    "answers": answers(36, "Vegan & <gluten-free>", 1, [0, 2], True),
                },
                {"item": workshop.id, "variation": morning.id, "attendee_name": "Ada's guest"},
            ],
        },
        {
            "email": "grace@example.org",
            "positions": [
                {
                    "item": ticket.id,
                    "attendee_name": "Grace Hopper",
                    "answers": answers(45, "none", 2, [1], False),
                }
            ],
        },
        {
            "email": "alan@example.org",
            "positions": [
                {"item": workshop.id, "variation": morning.id, "attendee_name": "Alan Turing"}
            ],
        },
        {
            "status": "p",
            "payment_provider": "stripe",
            "email": "edsger@example.org",
            "positions": [
                {
                    "positionid": 1,
                    "item": ticket.id,
                    "attendee_name": "Edsger Dijkstra",
                    "answers": answers(50, "", 0, [], False)[:1],
                },
                {"positionid": 2, "item": workshop.id, "variation": morning.id, "addon_to": 1},
            ],
        },
    ]
    for body in bodies:
        response = await client.post(orders_url(world, event), json=body, headers=auth(world.admin))
        assert response.status_code == 201, response.text
        shop.orders.append(response.json())
    canceled = shop.orders[2]["code"]
    response = await client.post(
        f"{orders_url(world, event)}{canceled}/mark_canceled/", headers=auth(world.admin)
    )
    assert response.status_code == 200, response.text
    shop.orders[2] = response.json()
    return shop


def money(value: str) -> Decimal:
    return Decimal(value)


def exporters_url(world: World, event: Any = None, *, organizer_level: bool = False) -> str:
    if organizer_level:
        return f"/api/v1/organizers/{world.org.slug}/exporters/"
    event = event or world.event
    return f"/api/v1/organizers/{world.org.slug}/events/{event.slug}/exporters/"


async def wait_download(client: Any, url: str, token: str, **headers: str) -> Any:
    """GETs the download URL until it stops answering 409 (the job ran)."""
    deadline = time.monotonic() + EXPORT_TIMEOUT
    while True:
        response = await client.get(url, headers={**auth(token), **headers})
        if response.status_code != 409 or time.monotonic() > deadline:
            return response
        assert response.headers["retry-after"] == "1"
        await asyncio.sleep(0.02)


async def export(
    client: Any,
    world: World,
    identifier: str,
    body: dict[str, Any],
    *,
    token: str | None = None,
    event: Any = None,
    organizer_level: bool = False,
    headers: dict[str, str] | None = None,
) -> Any:
    """Runs an exporter through the API (the ``background`` fixture runs the job) and
    returns the download's response."""
    token = token or world.admin
    base = exporters_url(world, event, organizer_level=organizer_level)
    response = await client.post(
        f"{base}{identifier}/run/", json=body, headers={**auth(token), **(headers or {})}
    )
    assert response.status_code == 202, response.text
    url = response.json()["download"]
    assert url.startswith(f"http://testserver{base}{identifier}/download/")
    return await wait_download(client, url, token)


def xlsx_sheets(data: bytes) -> dict[str, list[list[Any]]]:
    book = openpyxl.load_workbook(io.BytesIO(data))
    return {
        sheet.title: [list(row) for row in sheet.iter_rows(values_only=True)]
        for sheet in book.worksheets
    }


def xlsx_formats(data: bytes, sheet: str, row: int) -> list[str]:
    book = openpyxl.load_workbook(io.BytesIO(data))
    return [cell.number_format for cell in book[sheet][row]]


def csv_rows(data: bytes, delimiter: str = ",") -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8")), delimiter=delimiter))


def records(rows: list[list[Any]]) -> list[dict[str, Any]]:
    headers = [str(h) for h in rows[0]]
    return [dict(zip(headers, row, strict=True)) for row in rows[1:]]


def berlin(value: str) -> dt.datetime:
    """An API datetime as the naive Berlin wall time an XLSX cell holds."""
    from zoneinfo import ZoneInfo

    moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment.astimezone(ZoneInfo("Europe/Berlin")).replace(tzinfo=None)
