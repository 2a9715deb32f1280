"""File questions (type ``F``) at the shop's checkout: a file input in a multipart form, the file
checked as an upload (type, name, content, size), a refusal as a sentence at the field with the
other input (and a file already taken) kept, the answer stored as the API's file fields store
one, and the file linked on the order page under the order's secret. The headless API still
takes no files (400 naming the question)."""

from __future__ import annotations

import io
import re

from PIL import Image
from sqlalchemy import select

from admit.models import Answer, UploadedFile
from admit.shop import file_answers, multipart
from tests.oauth.helpers import csrf
from tests.shop import helpers as h


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 3), (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


async def _checkout(client, world, factory, *, required: bool = True):
    shop = await h.setup(factory, world)
    q = await h.question(
        factory,
        shop.event,
        shop.ticket,
        "Passport photo",
        type="F",
        required=required,
        identifier="PHOTO",
    )
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = csrf((await client.get(front)).text)
    await client.post(f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.ticket.id}": "1"})
    form = (await client.get(f"{front}checkout/")).text
    field = re.search(rf'name="(q_\d+_{q.id})"', form).group(1)  # type: ignore[union-attr]
    return shop, q, front, token, form, field


def _data(token: str, **kw: str) -> dict[str, str]:
    email = "ada@example.org"
    return {
        "csrf_token": token,
        "email": email,
        "email_repeat": email,
        "payment": "banktransfer",
        **kw,
    }


async def test_a_file_answer_is_checked_kept_and_linked(client, world, factory):
    _shop, q, front, token, form, field = await _checkout(client, world, factory)
    assert 'enctype="multipart/form-data"' in form
    assert f'type="file" id="{field}" name="{field}"' in form and "required" in form
    # required: no file is refused
    r = await client.post(f"{front}checkout/", data=_data(token), files={"x": ("", b"", "")})
    assert r.status_code == 400 and "Please upload a file for &#34;Passport photo&#34;" in r.text
    # a file of another type: a sentence at the field, the e-mail kept
    r = await client.post(
        f"{front}checkout/", data=_data(token), files={field: ("notes.txt", b"hello", "text/plain")}
    )
    assert r.status_code == 400
    assert f'id="{field}-error">The file must be a PDF, PNG, JPEG or GIF file.' in r.text
    assert 'value="ada@example.org"' in r.text and 'aria-invalid="true"' in r.text
    # a "PNG" that is none
    r = await client.post(
        f"{front}checkout/",
        data=_data(token),
        files={field: ("me.png", b"GIF89a not really", "image/png")},
    )
    assert r.status_code == 400 and "The file is not a" in r.text
    # a good file with another field wrong: the file is kept for the next try
    r = await client.post(
        f"{front}checkout/",
        data=_data(token, email_repeat="x@example.org"),
        files={field: ("me.png", png(), "image/png")},
    )
    assert r.status_code == 400 and "Uploaded: <strong>me.png</strong>" in r.text
    kept = re.search(rf'name="{field}_kept" value="(file:[0-9a-f]{{32}})"', r.text).group(1)  # type: ignore[union-attr]
    # a kept id of something else is ignored (and the question then unanswered)
    r = await client.post(
        f"{front}checkout/",
        data=_data(token, **{f"{field}_kept": "file:" + "0" * 32}),
        files={"x": ("", b"", "")},
    )
    assert r.status_code == 400 and "Please upload a file for &#34;Passport photo&#34;" in r.text
    r = await client.post(
        f"{front}checkout/",
        data=_data(token, **{f"{field}_kept": kept}),
        files={"x": ("", b"", "")},
    )
    assert r.status_code == 303, r.text
    order_url = r.headers["location"]
    async with factory.sessionmaker() as session:
        answer = (
            await session.execute(select(Answer).where(Answer.question_id == q.id))
        ).scalar_one()
        upload = (
            await session.execute(select(UploadedFile).where(UploadedFile.uuid == kept[5:]))
        ).scalar_one()
    assert answer.file == f"{upload.uuid}/me.png" and upload.expires is None
    assert answer.answer.endswith(f"/api/v1/media/{upload.uuid}/me.png")
    media = await client.get(answer.answer)  # the API's answer: the file's public media URL
    assert media.status_code == 200 and media.content == png()
    page = await client.get(order_url)
    link = re.search(r'href="([^"]*/files/\d+)">me.png</a>', page.text).group(1)  # type: ignore[union-attr]
    got = await client.get(link)
    assert got.status_code == 200 and got.content == png()
    assert got.headers["content-type"] == "image/png"
    assert got.headers["content-disposition"].startswith("attachment")
    wrong = link.replace(order_url.rstrip("/").split("/")[-1], "a" * 16)
    assert (await client.get(wrong)).status_code == 404
    for junk in ("0", "99999999999", "x", "%00", "-1"):
        assert (await client.get(f"{order_url}files/{junk}")).status_code == 404


async def test_an_optional_file_question_and_a_too_large_file(client, world, factory, monkeypatch):
    monkeypatch.setattr(multipart, "MAX_UPLOAD_BYTES", 20)
    _shop, _q, front, token, form, field = await _checkout(client, world, factory, required=False)
    assert f'name="{field}" accept=' in form and "(optional)" in form
    r = await client.post(
        f"{front}checkout/", data=_data(token), files={field: ("big.png", png(), "image/png")}
    )
    assert r.status_code == 400 and "The file is too large: at most 10 MB." in r.text
    assert 'value="ada@example.org"' in r.text
    r = await client.post(f"{front}checkout/", data=_data(token), files={"x": ("", b"", "")})
    assert r.status_code == 303, r.text  # optional: no file is fine


async def test_the_shop_holds_a_bounded_amount_of_unused_files(client, world, factory, monkeypatch):
    monkeypatch.setattr(file_answers, "QUOTA_FACTOR", 0)
    _shop, _q, front, token, _form, field = await _checkout(client, world, factory)
    r = await client.post(
        f"{front}checkout/", data=_data(token), files={field: ("me.png", png(), "image/png")}
    )
    assert r.status_code == 400 and "cannot take more files right now" in r.text
    async with factory.sessionmaker() as session:
        assert (await session.scalars(select(UploadedFile))).all() == []


async def test_junk_multipart_bodies_are_refused_without_a_500(client, world, factory):
    _shop, _q, front, token, _form, field = await _checkout(client, world, factory)
    url = f"{front}checkout/"
    bodies = [
        ("multipart/form-data", b"--x\r\n"),
        ("multipart/form-data; boundary=x", b"garbage without any boundary"),
        (
            "multipart/form-data; boundary=x",
            b"--x\r\nContent-Disposition: form-data\r\n\r\nv\r\n--x--\r\n",
        ),
        ("multipart/form-data; boundary=x", b"--x\r\nno headers at all\r\n--x--"),
        ("multipart/form-data; boundary=" + "b" * 300, b""),
        (
            "multipart/form-data; boundary=x",
            b'--x\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n'
            b"\xff\xfe\r\n--x--\r\n",
        ),
        (
            "multipart/form-data; boundary=x",
            b'--x\r\nContent-Disposition: form-data; name="a\x00"\r\n\r\nv\r\n--x--\r\n',
        ),
    ]
    for kind, body in bodies:
        r = await client.post(url, content=body, headers={"content-type": kind})
        assert 400 <= r.status_code < 500, (kind, body, r.status_code)
    # without the CSRF token: 403
    r = await client.post(
        url, data={"email": "a@example.org"}, files={field: ("a.png", png(), "image/png")}
    )
    assert r.status_code == 403
    # too many files
    many = {f"f{i}": (f"{i}.png", b"x", "image/png") for i in range(multipart.MAX_FILES + 1)}
    r = await client.post(url, data=_data(token), files=many)
    assert r.status_code == 400
    # a file to no question, odd names: ignored, the form answered normally
    r = await client.post(
        url,
        data=_data(token),
        files={
            "q_1_1": ("../../etc/passwd.png", b"\x89PNG", "image/png"),
            field: ("a\x00b.gif", b"GIF89a", "image/gif"),
        },
    )
    assert r.status_code == 400 and "Internal" not in r.text


async def test_the_headless_api_takes_an_uploaded_file(client, world, factory):
    shop = await h.setup(factory, world)
    url = f"{h.base(world)}/upload/"
    headers = {"content-type": "image/png", "content-disposition": 'attachment; filename="a.png"'}
    r = await client.post(url, content=png(), headers=headers)
    assert r.status_code == 400 and r.json() == {
        "non_field_errors": ["This event asks no file questions."]
    }
    q = await h.question(factory, shop.event, shop.ticket, "Photo", type="F", required=True)
    for kind, disposition, body in (
        ("text/plain", 'attachment; filename="a.txt"', b"x"),
        ("image/png", "", png()),
        ("image/png", 'attachment; filename="a.gif"', png()),
        ("image/png", 'attachment; filename="a.png"', b"not a png"),
        ("image/png", 'attachment; filename="a.png"', b""),
        ("image/gif", 'attachment; filename="a.gif"', png()),
    ):
        r = await client.post(
            url, content=body, headers={"content-type": kind, "content-disposition": disposition}
        )
        assert r.status_code == 400 and "non_field_errors" in r.json(), (kind, r.text)
    r = await client.post(url, content=png(), headers=headers)
    assert r.status_code == 201, r.text
    file_id = r.json()["id"]
    assert re.fullmatch(r"file:[0-9a-f]{32}", file_id)
    r = await h.cart(client, world, {"item": shop.ticket.id})
    cart_id, pid = r.json()["cart_id"], r.json()["positions"][0]["id"]
    # required: a missing file is named; an unknown id too
    r = await h.buy(client, world, cart_id, payment_provider="banktransfer")
    assert r.status_code == 400
    assert r.json()["positions"][0]["answers"] == ['Please upload a file for "Photo".']
    for junk in ("file:" + "0" * 32, "x", "", "https://example.org/a.png"):
        r = await h.buy(
            client,
            world,
            cart_id,
            payment_provider="banktransfer",
            positions=[{"id": pid, "answers": [{"question": q.id, "answer": junk}]}],
        )
        assert r.status_code == 400 and "file:<id>" in str(r.json()), junk
    r = await h.buy(
        client,
        world,
        cart_id,
        payment_provider="banktransfer",
        positions=[{"id": pid, "answers": [{"question": q.id, "answer": file_id}]}],
    )
    assert r.status_code == 201, r.text
    async with factory.sessionmaker() as session:
        answer = (await session.execute(select(Answer))).scalar_one()
        upload = (await session.execute(select(UploadedFile))).scalar_one()
    assert answer.file == f"{file_id[5:]}/a.png" and upload.expires is None
    assert upload.owner_kind == "shop" and upload.owner_id == shop.event.id
    # used once: the id no longer names an unused file
    r = await h.cart(client, world, {"item": shop.ticket.id})
    r = await h.buy(
        client,
        world,
        r.json()["cart_id"],
        payment_provider="banktransfer",
        positions=[
            {
                "id": r.json()["positions"][0]["id"],
                "answers": [{"question": q.id, "answer": file_id}],
            }
        ],
    )
    assert r.status_code == 400
