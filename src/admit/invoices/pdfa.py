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
- **Metadata**: the XMP packet (``pdfaid:part`` 3, ``conformance`` B, the Factur-X extension
  schema) and the document's attachment are added by the ``factur-x`` library
  (:func:`admit.invoices.einvoice.embed`); reportlab writes the trailer's document ``/ID``,
  draws no transparency (the logo is flattened beforehand) and encrypts nothing.
"""

from __future__ import annotations

import functools
from typing import Any

from reportlab.pdfbase import pdfdoc
from reportlab.pdfgen.canvas import Canvas

SRGB = "sRGB IEC61966-2.1"


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
    """reportlab's catalog writes only the keys it knows; this one also ``OutputIntents``."""

    __NoDefault__ = [*pdfdoc.PDFCatalog.__NoDefault__, "OutputIntents"]
    __Refs__ = __NoDefault__


class PdfACanvas(Canvas):
    """A canvas whose document declares the sRGB output intent. Its pages start in the
    document template's ``initialFontName``: the invoice sets an embedded face there."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The catalog is registered with the document already: it changes class in place.
        catalog = self._doc.Catalog
        catalog.__class__ = _Catalog
        catalog.OutputIntents = _output_intents()
