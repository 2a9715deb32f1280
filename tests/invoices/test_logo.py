"""The organizer's logo on invoices: ``invoice_logo_image`` takes an image upload
(``file:<id>``), reads back as its media URL, and is drawn on the PDF's first page, scaled
into its box and flattened (no soft mask)."""

from __future__ import annotations

import io

from PIL import Image
from pypdf import PdfReader

from tests.factories import World, auth
from tests.invoices import helpers as ih
from tests.uploads.helpers import upload_id, upload_pdf


def _transparent_png(size: tuple[int, int] = (1600, 400)) -> bytes:
    image = Image.new("RGBA", size, (0, 0, 0, 0))
    image.paste((20, 90, 200, 255), (0, 0, size[0] // 2, size[1]))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _images(pdf: bytes) -> list[dict]:
    page = PdfReader(io.BytesIO(pdf)).pages[0]
    xobjects = page["/Resources"].get("/XObject") or {}
    found = []
    for name in xobjects:
        obj = xobjects[name].get_object()
        if obj.get("/Subtype") == "/Image":
            found.append(obj)
    return found


async def _invoice_pdf(client, world: World, factory, background) -> bytes:
    item = await ih.ticket(factory, world, "119.00", await ih.vat_rule(factory, world))
    order = await ih.order(client, world, [item], invoice_address=ih.DE_PERSON)
    r = await ih.action(client, world, order["code"], "create_invoice")
    assert r.status_code == 201, r.text
    r = await ih.download(client, world, r.json()["number"], background)
    assert r.status_code == 200, r.text
    return r.content


async def test_the_logo_is_drawn_scaled_and_opaque(client, background, world: World, factory):
    file_id = await upload_id(
        client, world.admin, _transparent_png(), content_type="image/png", filename="logo.png"
    )
    await ih.settings(client, world, **ih.ISSUER)
    r = await client.patch(
        ih.event_url(world, "settings/"),
        json={"invoice_logo_image": file_id},
        headers=auth(world.admin),
    )
    assert r.status_code == 200, r.text
    url = r.json()["invoice_logo_image"]
    assert url.startswith("http://testserver/api/v1/media/") and url.endswith("/logo.png")
    r = await client.get(ih.event_url(world, "settings/"), headers=auth(world.admin))
    assert r.json()["invoice_logo_image"] == url
    # PUT-back of the URL keeps it
    r = await client.patch(
        ih.event_url(world, "settings/"),
        json={"invoice_logo_image": url},
        headers=auth(world.admin),
    )
    assert r.status_code == 200 and r.json()["invoice_logo_image"] == url

    [image] = _images(await _invoice_pdf(client, world, factory, background))
    assert max(image["/Width"], image["/Height"]) <= 700  # scaled down from 1600 px
    assert image["/Width"] / image["/Height"] == 4  # aspect kept
    assert "/SMask" not in image and image["/ColorSpace"] == "/DeviceRGB"


async def test_no_logo_no_image_and_bad_values_refused(client, background, world: World, factory):
    await ih.settings(client, world, **ih.ISSUER)
    assert _images(await _invoice_pdf(client, world, factory, background)) == []
    pdf_id = await upload_pdf(client, world.admin)
    for bad, words in (
        ("https://example.org/logo.png", "Upload the file"),
        (pdf_id, "must be of type"),
        ("file:" + "0" * 32, "does not exist"),
    ):
        r = await client.patch(
            ih.event_url(world, "settings/"),
            json={"invoice_logo_image": bad},
            headers=auth(world.admin),
        )
        assert r.status_code == 400, r.text
        assert words in str(r.json()["invoice_logo_image"])
    r = await client.patch(
        ih.event_url(world, "settings/"),
        json={"invoice_logo_image": None},
        headers=auth(world.admin),
    )
    assert r.status_code == 200 and r.json()["invoice_logo_image"] is None


def test_a_logo_past_the_upload_pixel_bound_is_not_decoded():
    """The bound is read from the image's header: a 1-bit PNG of just over 40 million pixels
    (5 MB in memory, a few KB on disk) is refused without being decoded to RGBA (160 MB)."""
    from admit.invoices.drawing import LOGO_PIXELS, prepare_logo
    from admit.uploads.sniff import MAX_PIXELS

    width = 8000
    height = MAX_PIXELS // width + 1
    out = io.BytesIO()
    Image.new("1", (width, height), 1).save(out, format="PNG")
    assert prepare_logo(out.getvalue()) is None
    # At the bound (a JPEG, decoded scaled down) it is prepared, at most LOGO_PIXELS wide.
    out = io.BytesIO()
    Image.new("RGB", (width, MAX_PIXELS // width), (200, 30, 30)).save(out, format="JPEG")
    prepared = prepare_logo(out.getvalue())
    assert prepared is not None
    with Image.open(io.BytesIO(prepared)) as image:
        assert max(image.size) <= LOGO_PIXELS and image.mode == "RGB"
