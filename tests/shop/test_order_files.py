"""File answers changed on the order page: the form shows the file the order holds and takes a
new one (checked as at checkout); a refused form keeps a file it took; the replaced upload
expires as an unused one; a required file question is satisfied by the file already held."""

from __future__ import annotations

import re

from sqlalchemy import select

from admit.models import Answer, UploadedFile
from tests.shop.test_file_questions import _checkout, _data, png

EMPTY = {"x": ("", b"", "")}  # a multipart form without a file


async def _ordered(client, world, factory):
    """An order whose ticket answered the required photo question with ``me.png``."""
    shop, q, front, token, _form, at_checkout = await _checkout(client, world, factory)
    r = await client.post(
        f"{front}checkout/",
        data=_data(token),
        files={at_checkout: ("me.png", png(), "image/png")},
    )
    assert r.status_code == 303, r.text
    page = r.headers["location"]
    shown = (await client.get(page)).text  # the order's position, not the cart's
    pid = re.search(rf'name="q_(\d+)_{q.id}"', shown).group(1)  # type: ignore[union-attr]
    return shop, q, page, token, f"q_{pid}_{q.id}", pid


async def _file_answer(factory, question_id: int) -> tuple[Answer, UploadedFile]:
    async with factory.sessionmaker() as session:
        answer = (
            await session.execute(select(Answer).where(Answer.question_id == question_id))
        ).scalar_one()
        upload = (
            await session.execute(
                select(UploadedFile).where(UploadedFile.uuid == answer.file.split("/")[0])
            )
        ).scalar_one()
        return answer, upload


async def test_the_buyer_replaces_a_file_answer(client, world, factory):
    _shop, q, page, token, field, _pid = await _ordered(client, world, factory)
    shown = (await client.get(page)).text
    assert f'action="{page}details" novalidate enctype="multipart/form-data"' in shown
    assert f'type="file" id="{field}" name="{field}"' in shown
    assert "Uploaded: <strong>me.png</strong>" in shown  # not required again: a file is held
    _old_answer, old_upload = await _file_answer(factory, q.id)
    assert old_upload.expires is None
    r = await client.post(
        f"{page}details",
        data={"csrf_token": token},
        files={field: ("passport.png", png(), "image/png")},
    )
    assert r.status_code == 303, r.text
    answer, upload = await _file_answer(factory, q.id)
    assert answer.file == f"{upload.uuid}/passport.png" and upload.expires is None
    assert answer.answer.endswith(f"/api/v1/media/{upload.uuid}/passport.png")
    async with factory.sessionmaker() as session:
        replaced = await session.get(UploadedFile, old_upload.id)
    assert replaced.expires is not None  # type: ignore[union-attr]  # unused now: it expires
    after = (await client.get(page)).text
    assert "Your changes have been saved." in after
    link = re.search(r'href="([^"]*/files/\d+)">passport.png</a>', after).group(1)  # type: ignore[union-attr]
    got = await client.get(link)
    assert got.status_code == 200 and got.content == png()
    # nothing sent: the file stays
    r = await client.post(f"{page}details", data={"csrf_token": token}, files=EMPTY)
    assert r.status_code == 303, r.text
    assert (await _file_answer(factory, q.id))[0].file == answer.file


async def test_a_refused_file_is_a_sentence_and_changes_nothing(client, world, factory):
    _shop, q, page, token, field, _pid = await _ordered(client, world, factory)
    before, _ = await _file_answer(factory, q.id)
    r = await client.post(
        f"{page}details",
        data={"csrf_token": token},
        files={field: ("notes.txt", b"hello", "text/plain")},
    )
    assert r.status_code == 400
    assert f'id="{field}-error">The file must be a PDF, PNG, JPEG or GIF file.' in r.text
    assert (await _file_answer(factory, q.id))[0].file == before.file
    no_token = await client.post(
        f"{page}details", data={}, files={field: ("me.png", png(), "image/png")}
    )
    assert no_token.status_code == 403


async def test_a_file_taken_by_a_refused_form_is_kept_for_the_next_try(client, world, factory):
    shop, q, page, token, field, pid = await _ordered(client, world, factory)
    from tests.shop import helpers as h

    age = await h.question(factory, shop.event, shop.ticket, "Age", type="N", required=True)
    r = await client.post(
        f"{page}details",
        data={"csrf_token": token},
        files={field: ("new.png", png(), "image/png")},
    )
    assert r.status_code == 400 and f'id="q_{pid}_{age.id}-error"' in r.text
    assert "Uploaded: <strong>new.png</strong>" in r.text
    kept = re.search(rf'name="{field}_kept" value="(file:[0-9a-f]{{32}})"', r.text).group(1)  # type: ignore[union-attr]
    r = await client.post(
        f"{page}details",
        data={"csrf_token": token, f"{field}_kept": kept, f"q_{pid}_{age.id}": "40"},
        files=EMPTY,
    )
    assert r.status_code == 303, r.text
    answer, upload = await _file_answer(factory, q.id)
    assert answer.file.endswith("/new.png") and kept.endswith(upload.uuid)
