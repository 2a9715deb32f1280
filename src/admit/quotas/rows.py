"""How quotas render for GETs (see ``kit/resources/render.py``): the same JSON as ``quota_to_read``
through ``QuotaOut``; the availability fields only come with ``with_availability``, which the
read schema path answers."""

from __future__ import annotations

from admit.kit.resources.render import Nested, Rows
from admit.models import Quota
from admit.quotas.schemas import QuotaOut

QUOTA_ROWS = Rows(
    QuotaOut,
    Quota,
    omit=("available", "available_number"),
    children=(Nested.of(Quota.items), Nested.of(Quota.variations, probe=True)),
)
