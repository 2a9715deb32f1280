"""Finding a shredder: every shredder module imported (each registers itself in
:data:`admit.shredders.base.REGISTRY`), then looked up. The shredders import ``base``, never
this module, so the registry and its users stay out of a circle."""

from __future__ import annotations

from admit.shredders import attendees, cache, checkins, contact  # noqa: F401  (they register)
from admit.shredders.base import REGISTRY, Shredder


def shredders() -> list[Shredder]:
    """All shredders in identifier order (stable pagination)."""
    return sorted(REGISTRY.values(), key=lambda s: s.identifier)


def find(identifier: str) -> Shredder | None:
    return REGISTRY.get(identifier)
