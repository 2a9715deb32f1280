"""The waiting list form of the shop's front page or a series date's page (a sold-out
product): same page, same
refusals as the other forms (``pages.py``), the entry written by ``waiting.py``."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from admit.db import utcnow
from admit.kit.http.context import Session
from admit.kit.http.errors import FieldErrors
from admit.shop import dates, waiting
from admit.shop.pages import Refused, S, _event, _front, posted, sentences
from admit.web.forms import first

router = APIRouter(include_in_schema=False)


@router.post(f"{S}/waitinglist")
async def waiting_list(organizer: str, event: str, request: Request, session: Session) -> Response:
    """A sold-out product's waiting list: the buyer's address is told when a place frees up."""
    opened = await posted(request, session, organizer, event)
    if isinstance(opened, Response):
        return opened
    web, found, pairs = opened
    key = first(pairs, "product")
    email = first(pairs, f"wl_email_{key}").strip()[:254]
    date = first(pairs, "subevent")
    subevent = int(date) if date.isdigit() and len(date) <= 10 else None
    back = f"/{organizer}/{event}/{subevent}/" if subevent else f"/{organizer}/{event}/"
    try:
        parts = key.split("-")
        item, variation = int(parts[0]), (int(parts[1]) if len(parts) > 1 else None)
        await waiting.join(session, found, item, variation, email, subevent=subevent)
    except ValueError:
        web.web.flash("That product is not known here.")
    except FieldErrors as exc:
        await session.rollback()
        found = await _event(session, organizer, event) or found
        if subevent is not None and await dates.load(session, found, subevent, utcnow()) is None:
            subevent = None  # an unknown or past date: the list of dates, with the refusal
        response = await _front(
            web,
            found,
            organizer,
            status=400,
            errors=sentences(exc.errors),
            kept={f"wl_email_{key}": email},
            subevent_id=subevent if found.has_subevents else None,
        )
        raise Refused(response) from None
    else:
        web.web.flash(
            f"You are on the waiting list. We will write to {email} when a ticket frees up."
        )
    return web.redirect(back)
