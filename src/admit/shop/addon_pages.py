"""The add-on step of the shop: after a product with add-ons is put into the cart, the buyer
chooses its add-ons per position (each category's min/max), written by ``addons.choose`` — the
service the headless API's add-on route calls too."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from admit.db import utcnow
from admit.kit.http.context import Session
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.filtering import parse_int
from admit.models import Event
from admit.shop import addons
from admit.shop import cart as carts
from admit.shop.pages import Refused, S, _cart_key, _event, posted, sentences
from admit.shop.render import base_context
from admit.shop.render import page as render_page
from admit.web.page import Page

router = APIRouter(include_in_schema=False)


async def _page(
    web: Page,
    event: Event,
    organizer: str,
    *,
    status: int = 200,
    errors: list[str] | None = None,
    kept: dict[str, str] | None = None,
) -> Response:
    cart_id = web.web.get(_cart_key(event))
    offered = (
        await addons.choices(web.session, event, cart_id, utcnow())
        if carts.valid_cart_id(cart_id)
        else []
    )
    if not offered:
        return web.redirect(f"/{organizer}/{event.slug}/checkout/")
    return render_page(
        web,
        "addons.html",
        status,
        **base_context(event, organizer),
        choices=offered,
        errors=errors or [],
        kept=kept,
    )


@router.get(f"{S}/cart/addons/")
async def addons_form(organizer: str, event: str, request: Request, session: Session) -> Response:
    web = await Page.load(request, session)
    found = await _event(session, organizer, event)
    if found is None:
        return web.not_found()
    return await _page(web, found, organizer)


def _wants(pairs: list[tuple[str, str]], position: int) -> list[carts.Want]:
    """The add-ons chosen for ``position``: ``addon_<position>_<item>[-<variation>]`` fields."""
    prefix = f"addon_{position}_"
    wants = []
    for name, raw in pairs:
        if not name.startswith(prefix) or not raw.strip():
            continue
        try:
            count = parse_int(raw)
            item, variation = carts.form_key(name[len(prefix) :])
        except ValueError:
            raise FieldErrors.general("Quantities must be whole numbers.") from None
        if not 0 <= count <= carts.MAX_ADD:
            raise FieldErrors.general(f"Choose a quantity between 0 and {carts.MAX_ADD}.")
        wants.append(carts.Want(item, variation, count))
    return wants


@router.post(f"{S}/cart/addons/")
async def addons_submit(organizer: str, event: str, request: Request, session: Session) -> Response:
    opened = await posted(request, session, organizer, event)
    if isinstance(opened, Response):
        return opened
    web, found, pairs = opened
    cart_id = web.web.get(_cart_key(found)) or ""
    kept: dict[str, Any] = {k: v for k, v in pairs if k.startswith("addon_")}
    now = utcnow()
    try:
        if not carts.valid_cart_id(cart_id):
            raise FieldErrors.single("cart_id", "Your cart is empty.")
        for choice in await addons.choices(session, found, cart_id, now):
            wants = _wants(pairs, choice.position.id)
            await addons.choose(session, found, cart_id, choice.position.id, wants, now)
    except FieldErrors as exc:
        await session.rollback()
        found = await _event(session, organizer, event) or found
        response = await _page(
            web, found, organizer, status=400, errors=sentences(exc.errors), kept=kept
        )
        raise Refused(response) from None
    web.web.flash("Your add-ons are in your cart.")
    return web.redirect(f"/{organizer}/{event}/checkout/")
