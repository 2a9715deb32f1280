"""The invoice PDF as PDF/A-3b: the XMP packet declares part 3 conformance B, the catalog has
an sRGB output intent with its ICC profile, poppler's ``pdffonts`` lists every font embedded
(names in Latin, Cyrillic and CJK scripts, a logo drawn), the trailer has its document ID,
nothing is encrypted, and the Factur-X XML comes out of it valid against its schema."""

from __future__ import annotations

import io
import shutil
import subprocess

import facturx
import pytest
from lxml import etree
from PIL import ImageCms
from pypdf import PdfReader

from tests.factories import World
from tests.invoices import helpers as ih
from tests.invoices.test_logo import _transparent_png
from tests.uploads.helpers import upload_id

pytestmark = pytest.mark.skipif(shutil.which("pdffonts") is None, reason="poppler-utils")
NAMES = {"name": "Дмитрий 山田 Zoë", "street": "Hauptstr. 1", "zipcode": "10115",
         "city": "Berlin", "country": "DE"}  # fmt: skip


def _fonts(pdf: bytes, tmp_path) -> list[list[str]]:
    path = tmp_path / "invoice.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdffonts", str(path)], capture_output=True, text=True, check=True)
    rows = out.stdout.splitlines()[2:]  # the header and its rule
    return [row.split() for row in rows]


async def test_the_invoice_is_pdf_a_3b(client, background, world: World, factory, tmp_path):
    file_id = await upload_id(
        client, world.admin, _transparent_png(), content_type="image/png", filename="logo.png"
    )
    await ih.settings(client, world, **ih.ISSUER, invoice_logo_image=file_id)
    item = await ih.ticket(factory, world, "119.00", await ih.vat_rule(factory, world))
    order = await ih.order(client, world, [item, item], invoice_address=NAMES)
    number = (await ih.action(client, world, order["code"], "create_invoice")).json()["number"]
    pdf = (await ih.download(client, world, number, background)).content

    reader = PdfReader(io.BytesIO(pdf))
    assert not reader.is_encrypted
    root = reader.trailer["/Root"]
    xmp = reader.xmp_metadata
    assert xmp is not None
    packet = etree.fromstring(root["/Metadata"].get_object().get_data())
    ns = {"pdfaid": "http://www.aiim.org/pdfa/ns/id/"}
    assert packet.xpath("//pdfaid:part/text()", namespaces=ns) == ["3"]
    assert packet.xpath("//pdfaid:conformance/text()", namespaces=ns) == ["B"]
    # the document information agrees with the XMP packet
    info = reader.metadata
    assert info.title == xmp.dc_title["x-default"] == f"Invoice {number}"
    assert info.author == xmp.dc_creator[0] == "Acme Events GmbH"
    assert info.producer == xmp.pdf_producer and info.creator == xmp.xmp_creator_tool

    [intent] = [i.get_object() for i in root["/OutputIntents"]]
    assert intent["/S"] == "/GTS_PDFA1" and intent["/OutputConditionIdentifier"]
    profile = intent["/DestOutputProfile"].get_object()
    assert profile["/N"] == 3
    icc = ImageCms.ImageCmsProfile(io.BytesIO(profile.get_data()))
    assert icc.profile.xcolor_space.strip() == "RGB"

    ids = reader.trailer["/ID"]
    # (the bytes as written: pypdf decodes an ID starting FE FF as UTF-16, halving its length)
    assert len(ids) == 2 and len(ids[0].original_bytes) >= 16

    fonts = _fonts(pdf, tmp_path)
    assert len(fonts) >= 3, fonts  # regular, bold, CJK fallback at least
    # columns: name type [type2] encoding emb sub uni id gen; "emb" is 5th from the end
    assert all(row[-5] == "yes" for row in fonts), fonts
    assert not any("Helvetica" in row[0] for row in fonts)

    for page in reader.pages:  # no soft masks: the logo was flattened
        for name, obj in (page["/Resources"].get("/XObject") or {}).items():
            assert "/SMask" not in obj.get_object(), name

    name, xml = facturx.get_xml_from_pdf(pdf, check_xsd=True)
    assert name == "factur-x.xml"
    assert facturx.xml_check_xsd(xml, flavor="factur-x", level="en16931")
    assert facturx.get_flavor(etree.fromstring(xml)) == "factur-x"
