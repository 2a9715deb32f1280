"""The country choice of the invoice address form: every ISO code the order accepts, the
common ones by name first (names for the rest would be a data set of their own; the code is
what the order stores either way)."""

from __future__ import annotations

from admit.catalog.taxes.countries import COUNTRIES

NAMES = {
    "AT": "Austria", "BE": "Belgium", "BG": "Bulgaria", "CH": "Switzerland", "CY": "Cyprus",
    "CZ": "Czechia", "DE": "Germany", "DK": "Denmark", "EE": "Estonia", "ES": "Spain",
    "FI": "Finland", "FR": "France", "GB": "United Kingdom", "GR": "Greece", "HR": "Croatia",
    "HU": "Hungary", "IE": "Ireland", "IS": "Iceland", "IT": "Italy", "LI": "Liechtenstein",
    "LT": "Lithuania", "LU": "Luxembourg", "LV": "Latvia", "MT": "Malta", "NL": "Netherlands",
    "NO": "Norway", "PL": "Poland", "PT": "Portugal", "RO": "Romania", "SE": "Sweden",
    "SI": "Slovenia", "SK": "Slovakia", "TR": "Türkiye", "UA": "Ukraine", "US": "United States",
    "CA": "Canada", "AU": "Australia", "JP": "Japan", "CN": "China", "IN": "India",
    "BR": "Brazil", "MX": "Mexico", "ZA": "South Africa", "NZ": "New Zealand", "IL": "Israel",
}  # fmt: skip


def choices() -> list[tuple[str, str]]:
    """(code, label) pairs: the named countries by name, then the other codes."""
    named = sorted(((c, n) for c, n in NAMES.items() if c in COUNTRIES), key=lambda p: p[1])
    rest = [(c, c) for c in sorted(COUNTRIES - NAMES.keys())]
    return named + rest
