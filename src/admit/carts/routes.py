"""Routes (filled in by the sales work)."""

from __future__ import annotations

from admit.kit.routing import api_router

router = api_router()
