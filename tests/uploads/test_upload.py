"""POST /api/v1/upload: types, names, content checks, the size cap, ownership and expiry."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from sqlalchemy import update

from admit.db import utcnow
from admit.jobs.storage import StoredFileMissing
from admit.kit.http.context import Principal
from admit.kit.http.transaction import commit_and_notify
from admit.models import UploadedFile
from admit.uploads import service, sniff
from tests.factories import World, auth
from tests.uploads.helpers import (
    UPLOAD,
    image_bytes,
    pdf_bytes,
    pdf_of_size,
    stored,
    upload,
    upload_id,
    upload_pdf,
)


async def _content(app, row: UploadedFile) -> bytes:
    data = b""
    async for chunk in app.state.background.store.open(row.key):
        data += chunk
    return data


async def test_pdf_upload_is_stored_for_its_owner_and_expires(client, world: World, clean_app):
    content = pdf_bytes()
    response = await upload(client, world.admin, content)
    assert response.status_code == 201, response.text
    assert list(response.json()) == ["id"]
    row = await stored(clean_app, response.json()["id"])
    assert row is not None
    assert (row.content_type, row.filename, row.size) == (
        "application/pdf",
        "background.pdf",
        len(content),
    )
    assert row.owner_kind == "token"
    assert row.expires is not None
    left = row.expires - utcnow()
    assert dt.timedelta(hours=23, minutes=59) < left <= dt.timedelta(hours=24)
    assert await _content(clean_app, row) == content


@pytest.mark.parametrize(
    ("fmt", "content_type", "filename"),
    [("PNG", "image/png", "a.png"), ("JPEG", "image/jpeg", "a.JPG"),
     ("JPEG", "image/jpeg", "a.jpeg"), ("GIF", "image/gif", "a.gif")],
)  # fmt: skip
async def test_images_are_accepted(client, world: World, fmt, content_type, filename):
    await upload_id(
        client, world.admin, image_bytes(fmt), content_type=content_type, filename=filename
    )


async def test_content_type_parameters_are_ignored(client, world: World):
    await upload_id(client, world.admin, pdf_bytes(), content_type="Application/PDF; x=1")


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/json", "text/html", "image/svg+xml", ""]
)
async def test_other_types_are_refused(client, world: World, content_type):
    response = await upload(client, world.admin, b"%PDF-1.4 whatever", content_type=content_type)
    assert response.status_code == 400, response.text
    assert "is not allowed" in response.json()["non_field_errors"][0]


async def test_a_filename_is_required(client, world: World):
    response = await upload(client, world.admin, pdf_bytes(), filename=None)
    assert response.status_code == 400
    assert response.json()["non_field_errors"][0].startswith("Missing filename.")
    response = await upload(
        client,
        world.admin,
        pdf_bytes(),
        filename=None,
        headers={"Content-Disposition": "attachment"},
    )
    assert response.status_code == 400


async def test_extension_must_fit_the_type(client, world: World):
    response = await upload(client, world.admin, pdf_bytes(), filename="ticket.png")
    assert response.status_code == 400
    assert "invalid extension" in response.json()["non_field_errors"][0]


async def test_filename_keeps_unicode_and_loses_its_path(client, world: World, clean_app):
    headers = {"Content-Disposition": "attachment; filename*=UTF-8''..%2F%C3%BCber%20uns.pdf"}
    file_id = await upload_id(client, world.admin, pdf_bytes(), filename=None, headers=headers)
    row = await stored(clean_app, file_id)
    assert row is not None and row.filename == "über uns.pdf"
    assert service.url_name(row.filename) == "uber_uns.pdf"


@pytest.mark.parametrize(
    ("content", "content_type", "filename", "message"),
    [
        (b"\x89PNG\r\n\x1a\n" + b"0" * 100, "application/pdf", "a.pdf", "not a PDF"),
        (b"%PDF-1.7\n" + b"garbage " * 200, "application/pdf", "a.pdf", "not a readable PDF"),
        (b"just text", "image/png", "a.png", "not a readable PNG"),
        (b"GIF89a" + b"\x00" * 10, "image/gif", "a.gif", "not a readable GIF"),
    ],
)
async def test_content_must_be_what_the_type_says(
    client, world: World, content, content_type, filename, message
):
    response = await upload(
        client, world.admin, content, content_type=content_type, filename=filename
    )
    assert response.status_code == 400, response.text
    assert message in response.json()["non_field_errors"][0]


async def test_an_image_of_another_format_is_refused(client, world: World):
    response = await upload(
        client, world.admin, image_bytes("PNG"), content_type="image/jpeg", filename="a.jpg"
    )
    assert response.status_code == 400
    assert response.json() == {
        "non_field_errors": ["The file is not a JPEG image (it is a PNG image)."]
    }


async def test_a_truncated_image_is_refused(client, world: World):
    content = image_bytes("PNG", (300, 300))
    response = await upload(
        client,
        world.admin,
        content[: len(content) // 2],
        content_type="image/png",
        filename="a.png",
    )
    assert response.status_code == 400


async def test_an_empty_body_is_refused(client, world: World):
    response = await upload(client, world.admin, b"")
    assert response.status_code == 400
    assert response.json() == {"non_field_errors": ["The submitted file is empty."]}


async def test_upload_needs_credentials(client, world: World):
    response = await client.post(
        UPLOAD,
        content=pdf_bytes(),
        headers={
            "Content-Type": "application/pdf",
            "Content-Disposition": "attachment; filename=a.pdf",
        },
    )
    assert response.status_code == 401


async def test_a_credential_that_could_not_use_a_file_cannot_upload(client, world: World):
    # A token without any permission (or with read permissions only) takes no file field.
    response = await upload(client, world.nobody, pdf_bytes())
    assert response.status_code == 403, response.text


async def test_a_pdf_that_takes_too_long_to_read_is_refused(
    client, world: World, monkeypatch: pytest.MonkeyPatch
):
    # pypdf's recovery scans a broken file: crafted, 10 MB take it many seconds of CPU. The
    # check runs in a child process that is killed after the limit.
    monkeypatch.setattr(sniff, "CHECK_SECONDS", 0.5)
    content = b"%PDF-1.4\n" + b"1 0 obj\n" * (8 * 1024 * 1024 // 8)
    # The answer names the time limit: the check was stopped at CHECK_SECONDS (the code's
    # own bound), whatever the machine's speed; the wait_for only catches a hang.
    response = await asyncio.wait_for(upload(client, world.admin, content), 120)
    assert response.status_code == 400, response.text
    assert response.json() == {"non_field_errors": ["The PDF document could not be read in time."]}


# -- size cap ----------------------------------------------------------------------------------


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(service, "MAX_UPLOAD_BYTES", 4000)
    return 4000


async def test_a_file_over_the_cap_is_413(client, world: World, small_cap, clean_app):
    content = pdf_bytes(pages=30)
    assert len(content) > small_cap
    response = await upload(client, world.admin, content)
    assert response.status_code == 413
    assert response.json() == {"detail": "The file is too large: at most 4,000 bytes (0.00381 MB)."}


async def test_a_chunked_body_over_the_cap_is_cut_off(client, world: World, small_cap):
    sent = 0

    async def chunks():
        nonlocal sent
        for _ in range(1000):
            sent += 1000
            yield b"%PDF" + b"x" * 996

    headers = {
        **auth(world.admin),
        "Content-Type": "application/pdf",
        "Content-Disposition": "attachment; filename=a.pdf",
    }
    response = await client.post(UPLOAD, content=chunks(), headers=headers)
    assert response.status_code == 413
    assert sent < 100_000  # the server stopped reading long before the end


async def test_a_declared_length_over_the_cap_is_refused_up_front(client, world: World):
    headers = {
        **auth(world.admin),
        "Content-Type": "application/pdf",
        "Content-Disposition": "attachment; filename=a.pdf",
        "Content-Length": str(service.MAX_UPLOAD_BYTES + 1),
    }
    response = await client.post(UPLOAD, content=b"%PDF-", headers=headers)
    assert response.status_code == 413


async def test_a_file_at_the_default_cap_of_10_mb_is_taken(client, world: World):
    content = pdf_of_size(service.MAX_UPLOAD_BYTES)
    await upload_id(client, world.admin, content)
    response = await upload(client, world.admin, content + b"x")
    assert response.status_code == 413


# -- claiming, ownership, expiry --------------------------------------------------------------


def _principal(row: UploadedFile) -> Principal:
    return Principal(kind=row.owner_kind, id=row.owner_id, grants=())


async def test_claim_takes_only_the_callers_unexpired_upload_of_an_allowed_type(
    client, world: World, clean_app
):
    file_id = await upload_pdf(client, world.admin)
    row = await stored(clean_app, file_id)
    assert row is not None
    owner = _principal(row)
    stranger = Principal(kind="token", id=row.owner_id + 1000, grants=())
    async with clean_app.state.db.sessionmaker() as session:
        for value, who, types, message in [
            ("nonsense", owner, service.PDF_TYPES, "Expected a file id"),
            (17, owner, service.PDF_TYPES, "Expected a file id"),
            ("file:" + "0" * 32, owner, service.PDF_TYPES, "does not exist"),
            (file_id, stranger, service.PDF_TYPES, "does not exist"),
            (file_id, owner, service.IMAGE_TYPES, "must be of type"),
        ]:
            with pytest.raises(service.InvalidUpload, match=message):
                await service.claim_upload(session, who, value, types)
        claimed = await service.claim_upload(session, owner, file_id, service.PDF_TYPES)
        assert claimed.expires is None
        await session.commit()
    row = await stored(clean_app, file_id)
    assert row is not None and row.expires is None


async def test_expired_uploads_cannot_be_claimed_and_are_purged_with_their_files(
    client, world: World, clean_app
):
    old = await upload_pdf(client, world.admin)
    fresh = await upload_pdf(client, world.admin)
    used = await upload_pdf(client, world.admin)
    past = utcnow() - dt.timedelta(minutes=1)
    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(
            update(UploadedFile)
            .where(UploadedFile.uuid == old.removeprefix("file:"))
            .values(expires=past)
        )
        await session.execute(
            update(UploadedFile)
            .where(UploadedFile.uuid == used.removeprefix("file:"))
            .values(expires=None)
        )
        await session.commit()
    old_row = await stored(clean_app, old)
    assert old_row is not None
    async with clean_app.state.db.sessionmaker() as session:
        with pytest.raises(service.InvalidUpload, match="has expired"):
            await service.claim_upload(session, _principal(old_row), old, service.PDF_TYPES)

    store = clean_app.state.background.store
    async with clean_app.state.db.sessionmaker() as session:
        purged = await service.purge_expired(session, utcnow(), store=store)
        assert await store.size(old_row.key) is not None  # files go only after the commit
        await commit_and_notify(session)
    assert purged == 1
    assert await stored(clean_app, old) is None
    with pytest.raises(StoredFileMissing):
        await _content(clean_app, old_row)
    for kept in (fresh, used):
        row = await stored(clean_app, kept)
        assert row is not None and await store.size(row.key) == row.size


async def test_the_purge_is_a_registered_periodic_task(clean_app):
    from admit.jobs.runtime import periodic_tasks

    names = [
        t.name for t in periodic_tasks(clean_app.state.settings, clean_app.state.background.store)
    ]
    assert "uploads.purge" in names
