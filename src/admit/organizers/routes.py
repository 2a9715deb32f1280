"""Organizers the caller belongs to. Creating organizers is an administrator action (CLI)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy import select

from admit.kit.http.context import Authenticated, OrganizerAccess, OrgContext, Principal, Session
from admit.kit.http.context import public_base_url as base_url
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.resources.crud import Page
from admit.kit.resources.pagination import paginate
from admit.models import Organizer
from admit.organizers.schemas import OrganizerOut

router = api_router(tags=["organizers"])


def serialize(base: str, org: Organizer) -> dict:
    return OrganizerOut(
        name=org.name, slug=org.slug, public_url=f"{base}/{org.slug}/", plugins=org.plugins or []
    ).model_dump(mode="json")


@router.get("/organizers/", response_model=Page[OrganizerOut])
async def list_organizers(
    request: Request, session: Session, principal: Annotated[Principal, Depends(Authenticated())]
) -> JSONResponse:
    """List organizers

    Lists the organizers the caller has any access to, 50 a page, by slug.
    """
    query = (
        select(Organizer).where(Organizer.id.in_(principal.organizer_ids)).order_by(Organizer.slug)
    )
    base = base_url(request)
    body = await paginate(request, session, query, lambda rows: [serialize(base, o) for o in rows])
    return JSONResponse(body)


@router.get("/organizers/{organizer}/", response_model=OrganizerOut)
async def organizer_detail(ctx: Annotated[OrgContext, Depends(OrganizerAccess())]) -> JSONResponse:
    """Get an organizer

    Answers the organizer's name, slug and public URL.
    """
    return JSONResponse(serialize(base_url(ctx.request), await ctx.organizer()))
