"""``E/settings/``: the event's settings as one object (the reference's endpoint).

GET answers every registered key with its value (the default where unset) to anyone who may
see the event, as the reference does; ``?explain=true`` adds each key's label. PATCH
changes the keys it names (``null`` resets one to its default) and answers like GET; it needs
``event.settings.general:write`` and, per key, the permission its definition names (payment
keys ``event.settings.payment:write``, invoice keys ``event.settings.invoicing:write``).
Unknown keys are ignored, as the reference's serializer ignores them.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query
from starlette.responses import Response

from admit.events import settings as event_settings
from admit.kit.http.body import read_object
from admit.kit.http.context import EventAccess, EventContext, public_base_url
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import flush_guard
from admit.uploads.fields import resolve_file_field
from admit.uploads.service import InvalidUpload, media_path, media_url

router = api_router(tags=["events"])

PATH = "/organizers/{organizer}/events/{event}/settings/"


def _with_urls(ctx: EventContext, values: dict[str, Any]) -> dict[str, Any]:
    """File keys read as their absolute media URL (kept as the media path)."""
    base = public_base_url(ctx.request)
    for key in event_settings.FILE_KEYS:
        if key in values:
            values[key] = media_url(base, values[key])
    return values


async def _resolve_files(
    ctx: EventContext, changes: dict[str, Any], current: dict[str, Any]
) -> None:
    """File keys of the write: a ``file:<id>`` upload of the caller is claimed and kept as
    its media path, the current URL keeps the file, null clears it (400 naming the key for
    anything else)."""
    base = public_base_url(ctx.request)
    for key, types in event_settings.FILE_KEYS.items():
        if key not in changes:
            continue
        try:
            choice = await resolve_file_field(
                ctx.session,
                ctx.principal,
                changes[key],
                current_url=media_url(base, current.get(key)),
                allowed_types=types,
            )
        except InvalidUpload as exc:
            raise FieldErrors.single(key, str(exc)) from None
        if choice.action == "keep":
            del changes[key]
        elif choice.action == "clear":
            changes[key] = None
        elif choice.upload is not None:
            changes[key] = media_path(choice.upload)


def _answer(values: dict[str, Any], explain: bool) -> Response:
    if not explain:
        return JSONResponse(values)
    return JSONResponse(event_settings.EVENT_SETTINGS.explained(values))


@router.get(PATH, name="event-settings", response_model=dict[str, Any])
async def get_settings(
    ctx: Annotated[EventContext, Depends(EventAccess())],
    explain: Annotated[
        str | None, Query(description="Present: each key as {value, label, help_text, readonly}.")
    ] = None,
) -> Response:
    """Get the event's settings

    Answers every event setting Admit knows under the reference's key names (payment terms and
    methods, bank details, attendee data asked, ticket downloads, cancellation, waiting list,
    texts, locales, time zone, contact, invoices) with its value, or its default where none was
    set. With `explain` present, each key is an object with `value`, `label`, `help_text` and
    `readonly`.
    """
    # The reference looks only at the parameter's presence (``?explain`` does it too).
    values = _with_urls(ctx, await event_settings.load(ctx.session, ctx.event))
    return _answer(values, explain is not None)


@router.patch(
    PATH,
    name="event-settings-patch",
    response_model=dict[str, Any],
    openapi_extra=json_body(event_settings.EVENT_SETTINGS.model()),
)
async def patch_settings(
    ctx: Annotated[EventContext, Depends(EventAccess(event_settings.GENERAL))],
) -> Response:
    """Change event settings

    Changes the keys the body names and answers with all settings, as the GET does. `null`
    resets a key to its default; keys Admit does not know are ignored, as the reference ignores
    them. Values are validated (400 naming each bad key, rules across keys on the merged state).
    Payment keys also need `event.settings.payment:write`, invoice keys
    `event.settings.invoicing:write` (403 naming the keys otherwise).
    """
    raw = await read_object(ctx.request)
    registry = event_settings.EVENT_SETTINGS
    current = await event_settings.load(ctx.session, ctx.event)
    changes, _merged = registry.parse(raw, current)
    missing = [
        key
        for permission, keys in registry.permissions_for(changes).items()
        if not ctx.has_event_permission(ctx.event.id, permission)
        for key in keys
    ]
    if missing:
        raise APIError(
            403,
            "You do not have permission to change these settings: " + ", ".join(missing) + ".",
        )
    await _resolve_files(ctx, changes, current)
    await event_settings.save(ctx.session, ctx.event, changes)
    await flush_guard(ctx.session.flush())
    return _answer(_with_urls(ctx, await event_settings.load(ctx.session, ctx.event)), False)
