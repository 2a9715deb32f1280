"""``/control/``: the organizers of the signed-in user's teams; ``/control/organizer/{o}/``:
the events of one of them the user may see (any team of the organizer lets them in, as the
API's event list does)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.nav import Nav, organizer_nav, user_organizers
from admit.control.render import render
from admit.kit.http.context import OrganizerAccess, OrgContext
from admit.web.page import Page, signed_in

router = APIRouter(include_in_schema=False)


@router.get("/control/")
@signed_in()
async def home(page: Page) -> Response:
    """Every organizer the user works for; with exactly one, straight to it."""
    organizers = await user_organizers(page)
    if len(organizers) == 1:
        return page.redirect(organizers[0]["url"])
    return render(page, "home.html", organizers=organizers, nav=Nav(organizers=organizers))


@router.get("/control/organizer/{organizer}/")
@control_page(OrganizerAccess())
async def organizer_home(page: Page, ctx: OrgContext) -> Response:
    return render(page, "organizer.html", nav=await organizer_nav(page, ctx))
