"""The buyer's invoice address at checkout: which fields the event asks for and requires
(``invoice_address_asked``, ``invoice_address_required``, ``invoice_address_vatid``,
``invoice_address_company_required``, ``invoice_name_required``, as the reference names them),
and the address the order stores, which is also what the tax rules see (reverse charge).

A buyer is not trusted with ``vat_id_validated``: whatever the headless client sends, the shop
sets it itself. There is no online lookup (VIES) on this server, so "validated" means the VAT ID
has its country's prefix and the format that country's IDs have; the README says so.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from admit.catalog.taxes.countries import COUNTRIES
from admit.catalog.taxes.rules import EU_COUNTRIES, Buyer
from admit.events.settings import value
from admit.kit.http.errors import FieldErrors, validation_error
from admit.models import Event
from admit.orders.schemas import InvoiceAddressIn

FIELDS = ("company", "name", "street", "zipcode", "city", "country", "vat_id")
REQUIRED = "This field is required."

# The number after the country prefix, per EU member state (Greece's prefix is EL).
_VAT_FORMATS = {
    "AT": r"U\d{8}",
    "BE": r"[01]\d{9}",
    "BG": r"\d{9,10}",
    "CY": r"\d{8}[A-Z]",
    "CZ": r"\d{8,10}",
    "DE": r"\d{9}",
    "DK": r"\d{8}",
    "EE": r"\d{9}",
    "EL": r"\d{9}",
    "ES": r"[A-Z0-9]\d{7}[A-Z0-9]",
    "FI": r"\d{8}",
    "FR": r"[A-Z0-9]{2}\d{9}",
    "HR": r"\d{11}",
    "HU": r"\d{8}",
    "IE": r"\d[A-Z0-9+*]\d{5}[A-Z]{1,2}",
    "IT": r"\d{11}",
    "LT": r"\d{9}|\d{12}",
    "LU": r"\d{8}",
    "LV": r"\d{11}",
    "MT": r"\d{8}",
    "NL": r"\d{9}B\d{2}",
    "PL": r"\d{10}",
    "PT": r"\d{9}",
    "RO": r"\d{2,10}",
    "SE": r"\d{12}",
    "SI": r"\d{8}",
    "SK": r"\d{10}",
}


def normal_vat_id(vat_id: str) -> str:
    return re.sub(r"[\s.\-]", "", vat_id).upper()


def vat_id_plausible(country: str, vat_id: str) -> bool:
    """The VAT ID carries ``country``'s prefix and has that country's format."""
    prefix = "EL" if country == "GR" else country
    pattern = _VAT_FORMATS.get(prefix)
    vat_id = normal_vat_id(vat_id)
    if pattern is None or not vat_id.startswith(prefix):
        return False
    return re.fullmatch(pattern, vat_id[len(prefix) :]) is not None


def asked(event: Event) -> dict[str, bool]:
    """What the checkout form shows: the address at all, required, the VAT ID field."""
    shown = bool(value(event, "invoice_address_asked"))
    return {
        "asked": shown,
        "required": shown and bool(value(event, "invoice_address_required")),
        "vat_id": shown and bool(value(event, "invoice_address_vatid")),
        "company_required": shown and bool(value(event, "invoice_address_company_required")),
        "name_required": shown and bool(value(event, "invoice_name_required")),
    }


def from_form(pairs: list[tuple[str, str]]) -> dict[str, Any] | None:
    """The address typed into the checkout form (None: nothing typed)."""
    got = {k[3:]: v.strip()[:1000] for k, v in pairs if k.startswith("ia_") and k[3:] in FIELDS}
    business = any(k == "ia_is_business" and v for k, v in pairs)
    if not any(got.values()) and not business:
        return None
    if got.get("country"):
        got["country"] = got["country"].upper()
    return {**got, "is_business": business}


def _empty(address: dict[str, Any] | None) -> bool:
    return not address or not any(
        str(address.get(k) or "").strip() for k in (*FIELDS, "name_parts")
    )


def check(event: Event, raw: dict[str, Any] | None) -> dict[str, Any] | None:
    """The invoice address the order stores (None: none given and none required); raises
    FieldErrors under ``invoice_address`` naming each problem."""
    rules = asked(event)
    if not rules["asked"] or _empty(raw):
        if rules["required"]:
            raise FieldErrors({"invoice_address": {"non_field_errors": [REQUIRED]}})
        return None
    assert raw is not None
    data = {k: v for k, v in raw.items() if k != "vat_id_validated"}
    if not rules["vat_id"]:
        data.pop("vat_id", None)
    try:
        address = InvoiceAddressIn.model_validate(data)
    except ValidationError as exc:
        raise FieldErrors({"invoice_address": validation_error(exc).errors}) from None
    errors: dict[str, list[str]] = {}
    if rules["required"]:
        for key in ("street", "zipcode", "city", "country"):
            if not getattr(address, key):
                errors[key] = [REQUIRED]
    if rules["company_required"] and not address.company:
        errors["company"] = [REQUIRED]
    if rules["name_required"] and not (address.name or address.name_parts):
        errors["name"] = [REQUIRED]
    vat_id = normal_vat_id(address.vat_id)
    if vat_id and address.country in EU_COUNTRIES and not vat_id_plausible(address.country, vat_id):
        errors["vat_id"] = ["This VAT ID does not look valid for the chosen country."]
    if errors:
        raise FieldErrors({"invoice_address": errors})
    stored = address.model_dump(mode="json")
    stored["vat_id"] = vat_id
    stored["vat_id_validated"] = bool(
        address.is_business and vat_id and vat_id_plausible(address.country or "", vat_id)
    )
    return stored


def buyer_of(event: Event, raw: dict[str, Any] | None) -> Buyer | None:
    """The tax facts of a typed address, for showing prices before the order is placed (an
    address that does not pass :func:`check` counts as none)."""
    try:
        return Buyer.of(check(event, raw))
    except FieldErrors:
        return None


def buyer(country: str | None, is_business: bool, vat_id: str | None) -> Buyer | None:
    """The tax facts of a would-be address (the headless cart's prices for it)."""
    country = (country or "").upper()
    if country not in COUNTRIES:
        return None
    vat = normal_vat_id(vat_id or "")
    plausible = bool(is_business and vat and vat_id_plausible(country, vat))
    return Buyer(country=country, is_business=is_business, vat_id=vat, vat_id_validated=plausible)
