"""The check-in API: lists (CRUD, status, positions), redeem, annul, search, history and auto
check-in rules. Importing this module also registers what check-in adds to other packages:
the ``exited_orders`` quota counter, auto check-in on placed/paid orders, revoked secrets."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.responses import Response

from admit.checkin import annul as annul_module
from admit.checkin import exits, positions, revocation
from admit.checkin import openapi as _documented  # noqa: F401  (registers its answers)
from admit.checkin.access import READ, AnyEventPermission, ScanAccess
from admit.checkin.autocheckin import auto_checkin_rules
from admit.checkin.cloning import copy_checkin
from admit.checkin.history import history
from admit.checkin.lists import checkin_lists
from admit.checkin.redeem import Redeem
from admit.checkin.schemas import AnnulIn, RedeemIn
from admit.checkin.status import list_status as status_of
from admit.events.cloning import extra_copiers
from admit.kit.http.body import read_object
from admit.kit.http.context import EventContext, OrgContext
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import mount_crud, validate_input

router = api_router(tags=["checkin"])
ORG = "/organizers/{organizer}"
E = ORG + "/events/{event}"

mount_crud(router, checkin_lists)
mount_crud(router, history)
mount_crud(router, auto_checkin_rules)
exits.register()
revocation.register()
if copy_checkin not in extra_copiers:
    extra_copiers.append(copy_checkin)


@router.get(f"{E}/checkinlists/{{id}}/status/", name="checkinlists-status")
async def list_status(
    id: str, ctx: Annotated[EventContext, Depends(AnyEventPermission(*READ))]
) -> Response:
    """Tickets on the list and checked in, per product and variation; how many are inside."""
    clist = await checkin_lists.get_bare(ctx, id)
    return JSONResponse(await status_of(ctx, clist))


@router.get(f"{E}/checkinlists/{{id}}/positions/", name="checkinlists-positions")
async def list_positions(
    id: str, ctx: Annotated[EventContext, Depends(AnyEventPermission(*READ))]
) -> Response:
    """List the tickets of a check-in list

    The tickets on the list with the list's check-ins (`ignore_status` for all), 50 a page;
    a device token may ask for up to 1,000 (`page_size`), so a scanner that downloads the
    whole list needs few requests. The answer's `X-Page-Generated` header is the time to
    pass as `modified_since` to fetch only the tickets whose order changed since (the
    ticket, its order or a check-in on it).
    """
    clist = await checkin_lists.get_bare(ctx, id)
    return await positions.list_positions(ctx, clist)


@router.get(f"{E}/checkinlists/{{list}}/positions/{{id}}/", name="checkinlists-position")
async def list_position(
    list: str, id: str, ctx: Annotated[EventContext, Depends(AnyEventPermission(*READ))]
) -> Response:
    """Get a ticket of a check-in list

    Answers one ticket (order position) as the check-in list sees it, with the check-ins
    recorded for it on that list. A ticket the list does not take is 404.
    """
    clist = await checkin_lists.get_bare(ctx, list)
    return await positions.one_position(ctx, clist, id)


@router.post(f"{ORG}/checkinrpc/redeem/", openapi_extra=json_body(RedeemIn), name="checkin-redeem")
async def redeem(ctx: Annotated[OrgContext, Depends(ScanAccess())]) -> Response:
    """Checks a scanned ticket in or out on one or more check-in lists: 201 with ``ok``, or the
    reason it was refused (unknown ticket, wrong product, unpaid, already checked in, rules)."""
    data: RedeemIn = validate_input(RedeemIn, await read_object(ctx.request))  # type: ignore[assignment]
    return await Redeem(ctx, data).run()


@router.post(f"{ORG}/checkinrpc/annul/", openapi_extra=json_body(AnnulIn), name="checkin-annul")
async def annul(ctx: Annotated[OrgContext, Depends(ScanAccess())]) -> Response:
    """Annuls a check-in by its nonce (same device, within the annulment window)."""
    return await annul_module.annul(ctx)


@router.get(f"{ORG}/checkinrpc/search/", name="checkin-search")
async def search(ctx: Annotated[OrgContext, Depends(ScanAccess())]) -> Response:
    """Searches the tickets of several lists (``list``, repeatable; one list per event)."""
    return await positions.search(ctx)
