"""Running exporters as their jobs run (``export.run``, owner and all) and reading the files
back with the libraries a user's spreadsheet program stands in for."""

from __future__ import annotations

import asyncio
import csv
import io
import time
from typing import Any

import openpyxl
import pypdf

from admit.exports.base import EVENT, ORGANIZER
from admit.exports.tasks import EXPORT_KIND, export_input
from admit.models import Job
from tests.jobs.helpers import start_job, token_owner, wait_for


async def run_export(
    app: Any,
    token: str,
    identifier: str,
    form: dict[str, Any],
    *,
    organizer: Any,
    event: Any = None,
    locale: str = "en",
    seconds: float = 60,
) -> Job:
    """Enqueues the export for the token's owner (as the run route would) and waits for the
    job's end; needs the ``background`` fixture."""
    owner = await token_owner(app, token)
    spec = export_input(
        level=EVENT if event is not None else ORGANIZER,
        identifier=identifier,
        organizer_id=organizer.id,
        event_id=event.id if event is not None else None,
        form_data=form,
        locale=locale,
    )
    job_id, _ = await start_job(
        app,
        EXPORT_KIND,
        spec,
        organizer_id=organizer.id,
        event_id=event.id if event is not None else None,
        owner=owner,
    )
    return await wait_for(app, job_id, seconds=seconds)


async def result(background: Any, job: Job) -> bytes:
    assert job.status == "finished", (job.status, job.message)
    assert job.result_key
    return b"".join([chunk async for chunk in background.store.open(job.result_key)])


def xlsx_rows(data: bytes) -> list[list[Any]]:
    book = openpyxl.load_workbook(io.BytesIO(data), read_only=True)
    sheet = book.worksheets[0]
    return [list(row) for row in sheet.iter_rows(values_only=True)]


def csv_rows(data: bytes, delimiter: str = ",") -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8")), delimiter=delimiter))


def pdf_text(data: bytes) -> str:
    reader = pypdf.PdfReader(io.BytesIO(data))
    return "\n".join(page.extract_text() or "" for page in reader.pages)


def by_header(rows: list[list[Any]]) -> list[dict[str, Any]]:
    headers = [str(h) for h in rows[0]]
    return [dict(zip(headers, row, strict=False)) for row in rows[1:]]


async def fetch_download(client: Any, url: str, headers: dict[str, str], seconds: float = 60):
    """GETs the download URL until the export is no longer waiting or running (409)."""
    deadline = time.monotonic() + seconds
    while True:
        response = await client.get(url, headers=headers)
        if response.status_code != 409:
            return response
        assert time.monotonic() < deadline, response.text
        await asyncio.sleep(0.05)
