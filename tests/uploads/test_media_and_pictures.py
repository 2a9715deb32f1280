"""Used uploads at their public media URL, and the item's ``picture`` file field."""

from __future__ import annotations

from sqlalchemy import select

from admit.models import Item
from admit.uploads.pictures import item_picture
from admit.uploads.service import read_upload
from tests.checkin.helpers import event_url
from tests.factories import World, auth
from tests.uploads.helpers import image_bytes, pdf_bytes, upload_id, upload_pdf, upload_png

BASE = "http://testserver"


async def _create_item(client, world: World, **fields):
    body = {"name": {"en": "Ticket"}, "default_price": "10.00", **fields}
    return await client.post(event_url(world, "items/"), json=body, headers=auth(world.admin))


async def test_item_picture_takes_an_image_upload_and_reads_as_its_url(
    client, world: World, clean_app
):
    content = image_bytes("PNG")
    raw_utf8 = 'attachment; filename="Bühne 1.png"'.encode()
    file_id = await upload_id(
        client,
        world.admin,
        content,
        content_type="image/png",
        filename=None,
        headers={"Content-Disposition": raw_utf8},  # type: ignore[dict-item]
    )
    response = await _create_item(client, world, picture=file_id)
    assert response.status_code == 201, response.text
    url = response.json()["picture"]
    assert url == f"{BASE}/api/v1/media/{file_id.removeprefix('file:')}/Buhne_1.png"

    # Public: fetched without credentials, with its type and exact bytes.
    media = await client.get(url)
    assert media.status_code == 200
    assert media.headers["content-type"] == "image/png"
    assert media.headers["x-content-type-options"] == "nosniff"
    assert media.content == content

    # The renderer's way to the image.
    async with clean_app.state.db.sessionmaker() as session:
        item = await session.get(Item, response.json()["id"])
        assert item is not None
        upload = await item_picture(session, item)
        assert upload is not None
        assert await read_upload(clean_app.state.background.store, upload) == content


async def test_picture_survives_patch_and_put_with_its_url_and_null_clears_it(client, world: World):
    created = await _create_item(client, world, picture=await upload_png(client, world.admin))
    item = created.json()
    url = event_url(world, f"items/{item['id']}/")
    response = await client.patch(url, json={"active": False}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json()["picture"] == item["picture"]
    body = {"name": {"en": "Ticket"}, "default_price": "10.00", "picture": item["picture"]}
    response = await client.put(url, json=body, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json()["picture"] == item["picture"]
    response = await client.patch(url, json={"picture": None}, headers=auth(world.admin))
    assert response.json()["picture"] is None
    # The file itself stays served: a cloned item may still show it.
    assert (await client.get(item["picture"])).status_code == 200


async def test_bad_pictures_are_field_errors(client, world: World, factory):
    pdf = await upload_pdf(client, world.admin)
    designer = await factory.team(world.org, event_permissions=["event.items:write"])
    foreign = await upload_png(client, await factory.token(designer))  # another credential's
    for value, message in [
        (pdf, "must be of type"),
        (foreign, "does not exist or was uploaded by someone else"),
        ("https://example.org/cat.png", "Upload the file with POST /api/v1/upload"),
        ("file:nope", "Expected a file id"),
    ]:
        response = await _create_item(client, world, picture=value)
        assert response.status_code == 400, response.text
        assert message in response.json()["picture"][0], response.json()
    response = await _create_item(client, world, picture=5)
    assert response.status_code == 400
    async with factory.sessionmaker() as session:
        assert list(await session.scalars(select(Item.id))) == []


async def test_unused_uploads_and_wrong_names_are_not_served(client, world: World):
    file_id = await upload_png(client, world.admin)
    handle = file_id.removeprefix("file:")
    assert (await client.get(f"/api/v1/media/{handle}/logo.png")).status_code == 404
    item = (await _create_item(client, world, picture=file_id)).json()
    assert (await client.get(item["picture"])).status_code == 200
    for path in (
        f"{handle}/other.png",
        "0" * 32 + "/logo.png",
        "xyz/logo.png",
        f"{handle.upper()}/logo.png",
    ):
        response = await client.get(f"/api/v1/media/{path}")
        assert response.status_code == 404, path
        assert response.json() == {"detail": "Not found."}


async def test_media_of_a_pdf_background(client, world: World):
    content = pdf_bytes()
    file_id = await upload_id(client, world.admin, content)
    response = await client.post(
        event_url(world, "ticketlayouts/"),
        json={"name": "Default", "background": file_id},
        headers=auth(world.admin),
    )
    assert response.status_code == 201, response.text
    media = await client.get(response.json()["background"])
    assert media.status_code == 200
    assert media.headers["content-type"] == "application/pdf"
    assert media.headers["content-disposition"].startswith('inline; filename="background.pdf"')
    assert media.content == content
