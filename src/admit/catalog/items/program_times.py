"""An item's program times one by one, ``items/{item}/program_times/``.

The slots are the ones the item's ``program_times`` field lists (one JSON list on the item
row, see ``item_parity``): each keeps an id inside that list, unique within its item and never
changed while the slot exists, so the field and this resource always show the same slots.
A write here rewrites the item's list (the item row is locked first, so two writes of one
item cannot lose each other's slots) and counts as a change of the item, as a variation's
does. Slots are listed by id.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select
from starlette.responses import Response

from admit.catalog.items.item_parity import (
    MAX_PROGRAM_TIMES,
    SLOT_ORDER,
    ProgramTimeIn,
    new_slot,
    numbered,
    utc_text,
)
from admit.catalog.items.nested_routes import ITEM_PATH
from admit.catalog.items.resource import ItemChild, notify_item
from admit.kit.http.context import OrgContext
from admit.kit.http.errors import NON_FIELD, FieldErrors, not_found
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.http.transaction import SAFE_METHODS
from admit.kit.resources.crud import parse_pk
from admit.kit.resources.pagination import paginate_list
from admit.kit.resources.schema import ReadModel
from admit.models import Item
from admit.notifications.notify import ITEM_CHANGED


class ProgramTimeSlotOut(ReadModel):
    id: int
    start: dt.datetime
    end: dt.datetime


class ProgramTimeResource(ItemChild):
    name = "item-program-times"
    path = f"{ITEM_PATH}/program_times"
    model = Item  # the slots live in their item's row
    read_schema = ProgramTimeSlotOut
    write_schema = ProgramTimeIn
    renderer = None  # a JSON list, not rows: served by the read schema

    async def resolve_parent(self, ctx: OrgContext, value: str) -> Item:
        query = select(Item).where(Item.id == parse_pk(value), Item.event_id == ctx.event.id)  # type: ignore[attr-defined]
        if ctx.request.method not in SAFE_METHODS:
            query = query.with_for_update()
        item = (await ctx.session.execute(query)).scalar_one_or_none()
        if item is None:
            raise not_found()
        return item

    def slots(self, ctx: OrgContext) -> list[dict[str, Any]]:
        return sorted(numbered(self.item(ctx).program_times), key=lambda slot: slot["id"])

    async def handle_list(self, ctx: OrgContext) -> Response:
        results = [self.serialize(ctx, slot) for slot in self.slots(ctx)]
        return JSONResponse(paginate_list(ctx.request, results))

    async def get_object(self, ctx: OrgContext, raw_pk: str) -> dict[str, Any]:
        pk = parse_pk(raw_pk)
        found = next((slot for slot in self.slots(ctx) if slot["id"] == pk), None)
        if found is None:
            raise not_found()
        return found

    async def reload(self, ctx: OrgContext, obj: dict[str, Any]) -> dict[str, Any]:
        return obj

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: Any, supplied: set[str]
    ) -> None:
        assert isinstance(data, ProgramTimeIn)
        if data.end <= data.start:
            raise FieldErrors({"end": [SLOT_ORDER]})
        if obj is None and len(self.slots(ctx)) >= MAX_PROGRAM_TIMES:
            raise FieldErrors(
                {NON_FIELD: [f"An item can have at most {MAX_PROGRAM_TIMES} program times."]}
            )

    async def _store(self, ctx: OrgContext, slots: list[dict[str, Any]]) -> None:
        item = self.item(ctx)
        item.program_times = slots  # a new list: the JSON column is written again
        await ctx.session.flush()
        await notify_item(ctx, ITEM_CHANGED, item.id)

    async def perform_create(
        self, ctx: OrgContext, data: BaseModel, supplied: set[str]
    ) -> dict[str, Any]:
        assert isinstance(data, ProgramTimeIn)
        slots = self.slots(ctx)
        slot = new_slot(slots, data.start, data.end)
        await self._store(ctx, [*slots, slot])
        return slot

    async def perform_update(
        self, ctx: OrgContext, obj: dict[str, Any], data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, ProgramTimeIn)
        obj.update(start=utc_text(data.start), end=utc_text(data.end))
        slots = [obj if slot["id"] == obj["id"] else slot for slot in self.slots(ctx)]
        await self._store(ctx, slots)

    async def perform_delete(self, ctx: OrgContext, obj: dict[str, Any]) -> Response:
        await self._store(ctx, [slot for slot in self.slots(ctx) if slot["id"] != obj["id"]])
        return no_content()
