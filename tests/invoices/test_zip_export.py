"""The ``invoices`` exporter through the exports API: a ZIP of the invoice PDFs issued within
a date range, one entry per invoice and cancellation named by its number, each the invoice's
PDF (drawn by the export when its file is not there yet)."""

from __future__ import annotations

import datetime as dt
import io
import zipfile

from pypdf import PdfReader
from sqlalchemy import update

from admit.models import Invoice
from tests.factories import World, auth
from tests.invoices import helpers as ih


def _texts(data: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        return {
            name: PdfReader(io.BytesIO(archive.read(name))).pages[0].extract_text()
            for name in archive.namelist()
        }


async def test_zip_of_invoice_pdfs_by_date_range(client, background, world: World, factory):
    from tests.exports.shop import export

    await ih.settings(client, world, **ih.ISSUER, invoice_numbers_prefix="AC-")
    item = await ih.ticket(factory, world, "119.00", await ih.vat_rule(factory, world))
    first = await ih.order(client, world, [item], invoice_address=ih.DE_PERSON)
    second = await ih.order(client, world, [item, item], invoice_address=ih.FR_BUSINESS)
    for order in (first, second):
        r = await ih.action(client, world, order["code"], "create_invoice")
        assert r.status_code == 201, r.text
    await ih.action(client, world, first["code"], "mark_canceled")
    numbers = sorted(i["number"] for i in await ih.invoices(client, world))
    assert numbers == ["AC-00001", "AC-00002", "AC-00003"]
    for number in numbers:  # let the renderings finish, then lose one file
        assert (await ih.download(client, world, number, background)).status_code == 200
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Invoice)
            .where(Invoice.full_invoice_no == "AC-00002")
            .values(file_key=None, render_job_id=None)
        )
        await session.commit()

    descriptors = await client.get(ih.event_url(world, "exporters/"), headers=auth(world.admin))
    [zip_export] = [d for d in descriptors.json()["results"] if d["identifier"] == "invoices"]
    assert {p["name"] for p in zip_export["input_parameters"]} == {"date_from", "date_to"}

    today = dt.date.today()
    response = await export(client, world, "invoices", {"date_from": str(today)})
    assert response.status_code == 200 and response.content.startswith(b"PK")
    assert "invoices" in response.headers["content-disposition"]
    texts = _texts(response.content)
    assert sorted(texts) == [f"{n}.pdf" for n in numbers]
    for number in numbers:
        assert number in texts[f"{number}.pdf"]
    assert "Cancels invoice" in texts["AC-00003.pdf"] and "AC-00001" in texts["AC-00003.pdf"]
    assert "FR12345678901" in texts["AC-00002.pdf"]  # drawn by the export itself

    past = {"date_from": "2000-01-01", "date_to": str(today - dt.timedelta(days=1))}
    response = await export(client, world, "invoices", past)
    assert response.status_code == 200 and _texts(response.content) == {}
    response = await export(client, world, "invoices", {"date_to": str(today)})
    assert sorted(_texts(response.content)) == [f"{n}.pdf" for n in numbers]


async def test_bad_dates_are_refused(client, world: World):
    url = ih.event_url(world, "exporters/invoices/run/")
    r = await client.post(url, json={"date_from": "yesterday"}, headers=auth(world.admin))
    assert r.status_code == 400 and "date_from" in r.json()
