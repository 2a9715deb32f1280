"""Seating plans ``O/seatingplans/`` (CRUD): any member of the organizer may read them, writing
needs ``organizer.seatingplans:write``.

As in the reference, a plan in use by an event or a date cannot be deleted, and its layout
cannot be changed (403): the seats sold from it must stay where they are. Renaming it is fine.
"""

from __future__ import annotations

from pydantic import BaseModel
from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.kit.http.context import OrgContext
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.http.routing import api_router
from admit.kit.resources.crud import Resource, mount_crud
from admit.kit.resources.filtering import Ordering
from admit.models import Event, SeatingPlan, SubEvent
from admit.seating.layout import LayoutError, parse_layout
from admit.seating.schemas import SeatingPlanIn, SeatingPlanOut

WRITE = "organizer.seatingplans:write"
IN_USE = "This seating plan is in use by an event or a date and cannot be changed or deleted."

router = api_router()


async def plan_in_use(session: AsyncSession, plan: SeatingPlan) -> bool:
    """Whether an event or date of the plan's organizer uses it."""
    used_by_event = select(Event.id).where(
        Event.organizer_id == plan.organizer_id, Event.seating_plan == plan.id
    )
    used_by_date = (
        select(SubEvent.id)
        .join(Event, Event.id == SubEvent.event_id)
        .where(Event.organizer_id == plan.organizer_id, SubEvent.seating_plan == plan.id)
    )
    return bool(await session.scalar(select(or_(used_by_event.exists(), used_by_date.exists()))))


class SeatingPlanResource(Resource[SeatingPlan]):
    name = "seatingplans"
    tag = "seating plans"
    path = "/organizers/{organizer}/seatingplans"
    scope = "organizer"
    model = SeatingPlan
    read_schema = SeatingPlanOut
    write_schema = SeatingPlanIn
    write_permission = WRITE
    ordering = Ordering(
        fields={"id": SeatingPlan.id, "name": SeatingPlan.name}, default=("id",), pk=SeatingPlan.id
    )

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: SeatingPlan | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, SeatingPlanIn)
        try:
            parse_layout(data.layout)
        except LayoutError as exc:
            raise FieldErrors({"layout": exc.messages}) from None
        if obj is not None and data.layout != obj.layout:
            await _refuse_if_in_use(ctx.session, obj)

    async def perform_delete(self, ctx: OrgContext, obj: SeatingPlan) -> Response:
        await _refuse_if_in_use(ctx.session, obj)
        return await super().perform_delete(ctx, obj)


async def _refuse_if_in_use(session: AsyncSession, plan: SeatingPlan) -> None:
    """403 while in use. The row lock makes an event assigning the plan right now (it holds a
    share lock on it, see ``sync.assignment_errors``) finish first, or wait for this change."""
    await session.execute(select(SeatingPlan.id).where(SeatingPlan.id == plan.id).with_for_update())
    if await plan_in_use(session, plan):
        raise APIError(403, IN_USE)


plans = SeatingPlanResource()
mount_crud(router, plans)
