"""What makes reportlab's invoice PDF a PDF/A-3b file, drawn in the one pass that draws it
(no second parse and write of the PDF): an sRGB output intent in the catalog, and no font
that is not embedded.

- **Output intent**: the catalog's ``OutputIntents`` names an ICC profile of the colour space
  every colour is given in (reportlab draws in DeviceRGB). The sRGB profile is made by Pillow's
  LittleCMS binding (``ImageCms.createProfile("sRGB")``) once per process; no profile file is
  shipped.
- **Fonts**: reportlab's canvas starts every page with Helvetica selected (one of the 14
  standard fonts, never embedded), listed in the page's resources even when nothing is set in
  it. The canvas here starts with the invoice's own (embedded) regular face instead.
- **The Factur-X XML** (:class:`FacturX`): an embedded file (``factur-x.xml``, ``text/xml``)
  whose file specification is the document's associated file (``/AF``, relationship ``Data``)
  and is named in the catalog's ``EmbeddedFiles``, as Factur-X requires.
- **Metadata**: the XMP packet (``pdfaid:part`` 3, ``conformance`` B, the Factur-X extension
  schema with the document type, file name, version and profile) is made by the ``factur-x``
  library's XMP builder from the values the document information carries too (title, author,
  subject, producer, creator, reportlab's time stamp), so both agree as PDF/A wants. reportlab
  writes the trailer's document ``/ID``, draws no transparency (the logo is flattened
  beforehand) and encrypts nothing.

Everything is written by reportlab in its one pass: no second parse and write of the PDF.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from reportlab.pdfbase import pdfdoc
from reportlab.pdfgen.canvas import Canvas

SRGB = "sRGB IEC61966-2.1"
PRODUCER = "ReportLab PDF Library"
CREATOR = "Admit"
XML_NAME = "factur-x.xml"
PROFILE_XMP = "EN 16931"  # how the Factur-X extension schema names the EN 16931 profile


@dataclass(frozen=True)
class FacturX:
    """The XML to embed and the document information the XMP repeats."""

    xml: bytes
    title: str
    author: str
    lang: str


@functools.cache
def srgb_profile() -> bytes:
    """An sRGB ICC profile made by LittleCMS (through Pillow)."""
    from PIL import ImageCms

    return ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()


def _output_intents() -> Any:
    profile = pdfdoc.PDFStream(
        dictionary=pdfdoc.PDFDictionary({"N": 3}),
        content=srgb_profile(),
        filters=[pdfdoc.PDFZCompress],
    )
    intent = pdfdoc.PDFDictionary(
        {
            "Type": pdfdoc.PDFName("OutputIntent"),
            "S": pdfdoc.PDFName("GTS_PDFA1"),
            "OutputConditionIdentifier": pdfdoc.PDFString(SRGB),
            "Info": pdfdoc.PDFString(SRGB),
            "RegistryName": pdfdoc.PDFString("http://www.color.org"),
            "DestOutputProfile": profile,
        }
    )
    return pdfdoc.PDFArray([intent])


class _Catalog(pdfdoc.PDFCatalog):
    """reportlab's catalog writes only the keys it knows; this one also ``OutputIntents``
    and ``AF``."""

    __NoDefault__ = [*pdfdoc.PDFCatalog.__NoDefault__, "OutputIntents", "AF"]
    __Refs__ = __NoDefault__


class _Name(pdfdoc.PDFObject):
    """A PDF name written as given (reportlab's ``PDFName`` would escape the ``#`` of
    ``text#2Fxml``, the name ``text/xml``)."""

    def __init__(self, written: str) -> None:
        self.written = written.encode("ascii")

    def format(self, document: Any) -> bytes:
        return b"/" + self.written


def _xmp(facturx: FacturX, stamp: Any) -> bytes:
    from facturx.facturx import generate_xmp_object
    from lxml import etree

    root = generate_xmp_object(
        {
            "pdfa3_flavor": "B",
            "title": facturx.title,
            "author": facturx.author,
            "subject": facturx.title,
            "producer": PRODUCER,
            "creator_tool": CREATOR,
            "timestamp": stamp.datetime.isoformat(timespec="seconds"),
            "version": "1.0",
            "documenttype": "INVOICE",
            "xml_filename": XML_NAME,
            "xmp_level": PROFILE_XMP,
            "urn": "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#",
        }
    )
    body = etree.tostring(root, encoding="utf-8").decode()
    packet = (
        f'<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>\n{body}\n<?xpacket end="w"?>'
    )
    return packet.encode()


def _attach(doc: Any, catalog: Any, facturx: FacturX) -> None:
    """The XML as the document's associated file, and the XMP packet."""
    stamp = doc._timeStamp
    embedded = pdfdoc.PDFStream(
        dictionary=pdfdoc.PDFDictionary(
            {
                "Type": pdfdoc.PDFName("EmbeddedFile"),
                "Subtype": _Name("text#2Fxml"),
                "Params": pdfdoc.PDFDictionary(
                    {"Size": len(facturx.xml), "ModDate": pdfdoc.PDFDate(ts=stamp)}
                ),
            }
        ),
        content=facturx.xml,
        filters=[pdfdoc.PDFZCompress],
    )
    name = pdfdoc.PDFString(XML_NAME)
    filespec = doc.Reference(
        pdfdoc.PDFDictionary(
            {
                "Type": pdfdoc.PDFName("Filespec"),
                "F": name,
                "UF": name,
                "Desc": pdfdoc.PDFString("Factur-X XML file"),
                "AFRelationship": pdfdoc.PDFName("Data"),
                "EF": pdfdoc.PDFDictionary({"F": embedded, "UF": embedded}),
            }
        )
    )
    catalog.AF = pdfdoc.PDFArray([filespec])
    catalog.Names = pdfdoc.PDFDictionary(
        {"EmbeddedFiles": pdfdoc.PDFDictionary({"Names": pdfdoc.PDFArray([name, filespec])})}
    )
    catalog.Metadata = pdfdoc.PDFStream(
        dictionary=pdfdoc.PDFDictionary(
            {"Type": pdfdoc.PDFName("Metadata"), "Subtype": pdfdoc.PDFName("XML")}
        ),
        content=_xmp(facturx, stamp),
        filters=[],  # left readable, as PDF/A readers expect the packet
    )
    catalog.Lang = pdfdoc.PDFString(facturx.lang.replace("_", "-"))


class PdfACanvas(Canvas):
    """A canvas whose document declares the sRGB output intent and, given ``facturx``,
    carries the XML and the XMP packet. Its pages start in the document template's
    ``initialFontName``: the invoice sets an embedded face there."""

    def __init__(self, *args: Any, facturx: FacturX | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The catalog is registered with the document already: it changes class in place.
        catalog = self._doc.Catalog
        catalog.__class__ = _Catalog
        catalog.OutputIntents = _output_intents()
        if facturx is not None:
            _attach(self._doc, catalog, facturx)


def canvas_maker(facturx: FacturX | None) -> Any:
    return functools.partial(PdfACanvas, facturx=facturx)
