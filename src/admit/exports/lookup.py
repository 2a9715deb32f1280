"""Finding an exporter by level and identifier.

Each exporter module registers its exporters in :data:`admit.exports.base.REGISTRY` when it is
imported; :mod:`admit.exports.exporters` imports them all. That happens at the first lookup, not
with this module: some exporters load heavy libraries (reportlab for the PDF lists) that a server
answering no export request should not hold. The exporters import ``base``, never this module.
"""

from __future__ import annotations

from admit.exports.base import REGISTRY, Exporter


def load_exporters() -> None:
    """Imports every module that registers exporters."""
    import admit.exports.exporters  # noqa: F401


def exporters(level: str) -> list[Exporter]:
    """The exporters of a level, in identifier order (stable pagination)."""
    load_exporters()
    return sorted(
        (e for (lvl, _), e in REGISTRY.items() if lvl == level), key=lambda e: e.identifier
    )


def find(level: str, identifier: str) -> Exporter | None:
    load_exporters()
    return REGISTRY.get((level, identifier))
