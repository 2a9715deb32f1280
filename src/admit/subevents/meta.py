"""Organizer meta properties (``O/meta_properties/``): the keys ``meta_data`` may use.

An Admit extension: pretix manages these properties in its web interface only. Each has a
``name`` (letters, digits, ``_`` and ``-``; unique per organizer), a ``default`` that counts as
the value of events and dates without one (the ``attr[...]`` list filters honour it; detail
output shows only stored values), ``required`` (every event needs a value, a default will do)
and ``allowed_values`` (null for free text). Reading needs organizer membership only, writing
``organizer.settings.general:write``. A property cannot be renamed while events or dates use
its key; deleting one removes its values from events and dates.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.kit.http.context import OrgContext
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.crud import Resource
from admit.kit.resources.filtering import Ordering
from admit.models import Event, EventMetaProperty, SubEvent
from admit.subevents.schemas import MetaPropertyIn, MetaPropertyOut

WRITE = "organizer.settings.general:write"


def _users(organizer_id: int, name: str) -> tuple[Any, Any]:
    """Queries for the events and dates of the organizer storing a value under ``name``."""
    events = select(Event).where(
        Event.organizer_id == organizer_id, Event.meta_data[name].as_string().is_not(None)
    )
    dates = (
        select(SubEvent)
        .join(Event, Event.id == SubEvent.event_id)
        .where(
            Event.organizer_id == organizer_id, SubEvent.meta_data[name].as_string().is_not(None)
        )
    )
    return events, dates


async def key_in_use(session: AsyncSession, organizer_id: int, name: str) -> bool:
    events, dates = _users(organizer_id, name)
    for query in (events, dates):
        used = await session.scalar(select(func.count()).select_from(query.subquery()))
        if used:
            return True
    return False


async def drop_key(session: AsyncSession, organizer_id: int, name: str) -> None:
    """Removes the values of a deleted property, as the reference's cascade does."""
    for query in _users(organizer_id, name):
        for obj in (await session.scalars(query)).all():
            meta = dict(obj.meta_data or {})
            meta.pop(name, None)
            obj.meta_data = meta


class MetaPropertyResource(Resource[EventMetaProperty]):
    name = "meta-properties"
    path = "/organizers/{organizer}/meta_properties"
    model = EventMetaProperty
    scope = "organizer"
    read_schema = MetaPropertyOut
    write_schema = MetaPropertyIn
    write_permission = WRITE
    ordering = Ordering(
        fields={"id": EventMetaProperty.id, "name": EventMetaProperty.name},
        default=("id",),
        pk=EventMetaProperty.id,
    )

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: EventMetaProperty | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, MetaPropertyIn)
        errors: dict[str, list[str]] = {}
        if data.allowed_values is not None and data.default:
            if data.default not in data.allowed_values:
                errors["default"] = ["The default must be one of the allowed values."]
        renamed = obj is not None and obj.name != data.name
        if obj is None or renamed:
            taken = await ctx.session.scalar(
                select(func.count())
                .select_from(EventMetaProperty)
                .where(
                    EventMetaProperty.organizer_id == ctx.organizer_id,
                    EventMetaProperty.name == data.name,
                )
            )
            if taken:
                errors["name"] = ["A meta property with this name already exists."]
        if renamed and "name" not in errors:
            assert obj is not None
            if await key_in_use(ctx.session, ctx.organizer_id, obj.name):
                errors["name"] = [
                    f"The property cannot be renamed: events or dates use '{obj.name}'."
                ]
        if errors:
            raise FieldErrors(errors)

    async def perform_delete(self, ctx: OrgContext, obj: EventMetaProperty) -> Response:
        await drop_key(ctx.session, ctx.organizer_id, obj.name)
        return await super().perform_delete(ctx, obj)
