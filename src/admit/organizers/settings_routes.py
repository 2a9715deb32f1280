"""``O/settings/``: the organizer's settings as one object (the reference's endpoint).

Both GET and PATCH need ``organizer.settings.general:write``, as the reference asks for the
permission to change the organizer's settings to read them too. PATCH changes the keys it
names (``null`` resets one to its default) and answers like GET; unknown keys are ignored.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query
from starlette.responses import Response

from admit.kit.http.body import read_object
from admit.kit.http.context import OrganizerAccess, OrgContext
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import flush_guard
from admit.organizers import settings as organizer_settings

router = api_router(tags=["organizers"])

PATH = "/organizers/{organizer}/settings/"
REGISTRY = organizer_settings.ORGANIZER_SETTINGS


def _answer(values: dict[str, Any], explain: bool) -> Response:
    return JSONResponse(REGISTRY.explained(values) if explain else values)


@router.get(PATH, name="organizer-settings", response_model=dict[str, Any])
async def get_settings(
    ctx: Annotated[OrgContext, Depends(OrganizerAccess(organizer_settings.WRITE))],
    explain: Annotated[
        str | None, Query(description="Present: each key as {value, label, help_text, readonly}.")
    ] = None,
) -> Response:
    """Get the organizer's settings

    Answers every organizer setting Admit knows (customer accounts in the shop, the contact
    address, the imprint) with its value, or its default where none was set. With `explain`
    present, each key is an object with `value`, `label`, `help_text` and `readonly`.
    """
    return _answer(organizer_settings.load(await ctx.organizer()), explain is not None)


@router.patch(
    PATH,
    name="organizer-settings-patch",
    response_model=dict[str, Any],
    openapi_extra=json_body(REGISTRY.model()),
)
async def patch_settings(
    ctx: Annotated[OrgContext, Depends(OrganizerAccess(organizer_settings.WRITE))],
) -> Response:
    """Change organizer settings

    Changes the keys the body names and answers with all settings, as the GET does. `null`
    resets a key to its default; keys Admit does not know are ignored. Values are validated
    (400 naming each bad key).
    """
    raw = await read_object(ctx.request)
    organizer = await ctx.organizer()
    changes, _merged = REGISTRY.parse(raw, organizer_settings.load(organizer))
    organizer_settings.save(organizer, changes)
    await flush_guard(ctx.session.flush())
    return _answer(organizer_settings.load(organizer), False)
