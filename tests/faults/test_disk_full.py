"""The file store's disk runs full while exports and ticket PDFs are written.

The store lives on a tiny tmpfs (mounted by the test; skipped where mounting is not allowed)
that is filled to the last byte. The export and the PDF job fail with a message their
download URLs show (410), an upload in a request is answered 507, and the server serves on
throughout; once space is freed, a new export succeeds.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.factories import Factory, World, auth
from tests.faults.site import NOT_ON_PG, PG_URL, Site, open_site
from tests.tickets import helpers as tickets
from tests.uploads import helpers as uploads

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not PG_URL, reason=NOT_ON_PG)]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs, or a skip saying why there is none."""
    mount = tmp_path / "disk"
    mount.mkdir()
    try:
        result = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", str(mount)],
            capture_output=True,
            timeout=10,
        )
    except (FileNotFoundError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot mount a small tmpfs here: {exc}")
    if result.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {result.stderr.decode().strip()}")
    try:
        (mount / "store" / "jobs").mkdir(parents=True)
        (mount / "store" / "uploads").mkdir(parents=True)
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=10)


def _fill(disk: Path) -> Path:
    """Writes until the file system refuses: not one byte is left."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    return filler


async def _shop(factory: Factory, world: World) -> str:
    item = await tickets.ticket_item(factory, world.event)
    order, _ = await tickets.order(factory, world.event, item, ["Ada Lovelace", "山田太郎"])
    return order.code


async def _until_ended(site: Site, url: str, seconds: float = 40):
    """Polls a download URL until the job ended; due retries are made due at once (the
    backoff between attempts is not what this test is about)."""
    deadline = time.monotonic() + seconds
    async with site.client() as client:
        while time.monotonic() < deadline:
            response = await client.get(url, headers=auth(site.world.admin))
            if response.status_code != 409:
                return response
            await site.scalar(
                "UPDATE jobs SET run_after = now() WHERE status = 'waiting' "
                "AND run_after > now() RETURNING id"
            )
            await asyncio.sleep(0.3)
    raise AssertionError(f"{url} did not end in time")


async def test_full_disk_fails_export_and_pdf_jobs_with_a_message_and_serving_goes_on(
    fresh_database: str, tmp_path: Path, small_disk: Path
) -> None:
    env = {
        "ADMIT_STORAGE_URL": f"file://{small_disk / 'store'}",
        "ADMIT_JOB_SWEEP_SECONDS": "1",
        "ADMIT_JOB_LEASE_SECONDS": "3",
        "ADMIT_JOB_REDELIVER_SECONDS": "2",
    }
    data = tmp_path / "data"
    data.mkdir()
    async with open_site(fresh_database, data, _shop, **env) as (site, code):
        filler = await asyncio.to_thread(_fill, small_disk)
        headers = auth(site.world.admin)
        async with site.client() as client:
            export = await client.post(site.event_url("exporters/json/run/"), json={},
                                       headers=headers)  # fmt: skip
            assert export.status_code == 202, export.text
            pdf = await client.get(site.event_url(f"orders/{code}/download/pdf/"),
                                   headers=headers)  # fmt: skip
            assert pdf.status_code == 409, pdf.text
            upload = await uploads.upload(client, site.world.admin, uploads.pdf_bytes())
            assert upload.status_code == 507, upload.text
            assert set(upload.json()) == {"detail"}

            for url in (export.json()["download"], site.event_url(f"orders/{code}/download/pdf/")):
                ended = await _until_ended(site, url)
                assert ended.status_code == 410, ended.text
                body = ended.json()
                assert body["status"] == "failed" and body["message"], body
                # The server serves on meanwhile.
                listed = await client.get(site.event_url("orders/"), headers=headers)
                assert listed.status_code == 200, listed.text

            with contextlib.suppress(FileNotFoundError):
                filler.unlink()
            again = await client.post(site.event_url("exporters/json/run/"), json={},
                                      headers=headers)  # fmt: skip
            assert again.status_code == 202, again.text
            done = await _until_ended(site, again.json()["download"])
            assert done.status_code == 200, done.text
            assert done.json()["event"]["slug"] == site.world.event.slug
        log = site.server.log
        assert "unhandled error" not in log and "Exception in ASGI application" not in log, log[
            -3000:
        ]
