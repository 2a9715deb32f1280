"""Upload limits (issue 35): PDF checks run in a bounded pool of reused processes (not one
process per upload), a credential holds at most ``ADMIT_UPLOAD_QUOTA_BYTES`` of unused uploads,
and a credential that could not use a file (read-only) cannot upload (403)."""

from __future__ import annotations

import asyncio

import pytest

from admit.uploads import sniff
from tests.factories import World
from tests.uploads.helpers import pdf_bytes, upload


async def test_read_only_credentials_cannot_upload(client, world: World, factory):
    readers = await factory.team(
        world.org, event_permissions=["event.orders:read", "event.vouchers:read"]
    )
    for token in (world.nobody, await factory.token(readers)):
        response = await upload(client, token, pdf_bytes())
        assert response.status_code == 403, response.text
        assert "detail" in response.json()
    designers = await factory.team(world.org, event_permissions=["event.settings.general:write"])
    response = await upload(client, await factory.token(designers), pdf_bytes())
    assert response.status_code == 201, response.text


async def test_a_credential_holds_at_most_its_quota_of_unused_uploads(
    client, clean_app, world: World, factory, monkeypatch
):
    content = pdf_bytes()
    monkeypatch.setattr(clean_app.state.settings, "upload_quota_bytes", 2 * len(content) + 10)
    answers = [await upload(client, world.admin, content) for _ in range(3)]
    assert [a.status_code for a in answers] == [201, 201, 400], answers[-1].text
    assert "quota" in answers[-1].json()["non_field_errors"][0]
    # Another credential has its own quota.
    other = await factory.token(
        await factory.team(world.org, event_permissions=["event.items:write"])
    )
    assert (await upload(client, other, content)).status_code == 201


async def test_pdf_checks_share_a_bounded_pool_of_processes(client, world: World):
    """Eight PDFs at once: every one is checked, by at most PDF_WORKERS processes started
    (once) and reused; before, each upload started a process of its own."""
    pool = sniff.pool()
    started = pool.started
    answers = await asyncio.gather(
        *[upload(client, world.admin, pdf_bytes(text=f"Page {n}")) for n in range(8)]
    )
    assert [a.status_code for a in answers] == [201] * 8
    assert pool.started - started <= sniff.PDF_WORKERS
    assert len(pool.pids) <= sniff.PDF_WORKERS + started
    again = await upload(client, world.admin, pdf_bytes())
    assert again.status_code == 201 and pool.started - started <= sniff.PDF_WORKERS


async def test_a_worker_past_its_time_is_replaced(
    client, world: World, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(sniff, "CHECK_SECONDS", 0.5)
    pool = sniff.pool()
    slow = b"%PDF-1.4\n" + b"1 0 obj\n" * (8 * 1024 * 1024 // 8)
    response = await upload(client, world.admin, slow)
    assert response.json() == {"non_field_errors": ["The PDF document could not be read in time."]}
    assert all(worker.alive for worker in pool.idle)  # the stuck one was killed, not kept
    monkeypatch.setattr(sniff, "CHECK_SECONDS", 10.0)
    assert (await upload(client, world.admin, pdf_bytes())).status_code == 201
