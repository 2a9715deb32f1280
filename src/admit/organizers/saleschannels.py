"""``O/saleschannels/``: the sales channels an organizer sells through, as the reference lists
them (``identifier``, ``label``, ``type``, ``position``).

Admit's channels are fixed (``admit.events.plugins.SALES_CHANNELS``), the same for every
organizer; clients read them to fill the ``sales_channel`` of orders and carts and the
``limit_sales_channels`` of events, items and discounts. Each is the one channel of its type,
so its identifier is its type, as the reference does for single-instance channel types.
Creating channels (the reference's ``api`` channel instances) is not offered.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.responses import Response

from admit.events.plugins import SALES_CHANNELS
from admit.kit.http.context import OrganizerAccess, OrgContext
from admit.kit.http.errors import not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.resources.crud import Page
from admit.kit.resources.pagination import paginate_list
from admit.kit.resources.schema import ReadModel

router = api_router(tags=["saleschannels"])

# Human-readable names; a channel missing here is shown by its identifier.
LABELS: dict[str, str] = {
    "web": "Online shop",
    "api": "API",
    "box_office": "Box office",
    "resellers": "Resellers",
}


class SalesChannelOut(ReadModel):
    identifier: str
    label: dict[str, str]
    type: str
    position: int


def channels() -> list[dict]:
    """Every channel in its fixed order (``position`` is the index)."""
    return [
        {
            "identifier": name,
            "label": {"en": LABELS.get(name, name.replace("_", " ").capitalize())},
            "type": name,
            "position": position,
        }
        for position, name in enumerate(SALES_CHANNELS)
    ]


# Readable by anyone with access to the organizer: the names are no secret, and whoever
# creates orders or limits products needs them.
Ctx = Annotated[OrgContext, Depends(OrganizerAccess())]


@router.get("/organizers/{organizer}/saleschannels/", response_model=Page[SalesChannelOut])
async def list_sales_channels(ctx: Ctx) -> Response:
    """All sales channels, paginated like every list."""
    return JSONResponse(paginate_list(ctx.request, channels()))


@router.get("/organizers/{organizer}/saleschannels/{identifier}/", response_model=SalesChannelOut)
async def sales_channel_detail(ctx: Ctx, identifier: str) -> Response:
    """One channel by its identifier; 404 for an unknown one."""
    for channel in channels():
        if channel["identifier"] == identifier:
            return JSONResponse(channel)
    raise not_found()
