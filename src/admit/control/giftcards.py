"""The organizer's gift cards: the list (found by their code, the API's ``secret`` filter), a
new card, a card's page with its transactions, its history of changes, a form that adds or
takes value (the API's ``transact``: atomic, refused when the credit is short, so two
bookings at once never take the card below zero) and one changing its expiry and conditions
(the API's PATCH; a card's currency, code and test mode stay as issued). Every read and write
is the API's own handler, under its permissions."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from fastapi import APIRouter
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.api_call import Errors, answer, run, with_body
from admit.control.editing import found, listed, no_such
from admit.control.fields import Field, defaults, to_body, to_form, typed
from admit.control.history import organizer_history
from admit.control.nav import organizer_nav
from admit.control.render import render
from admit.giftcards import routes as card_routes
from admit.kit.http.context import OrganizerAccess, OrgContext
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.resources.crud import Resource
from admit.web.forms import Pairs
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
PATH = "/control/organizer/{organizer}/giftcards"
READ, WRITE = card_routes.READ, card_routes.WRITE
CARDS = card_routes.cards

CARD_FIELDS = [
    Field("value", "Value", "decimal", required=True, help="E.g. 50.00."),
    Field("currency", "Currency", required=True, default="EUR", help="Three letters."),
    Field("secret", "Code", help="Empty: one is generated."),
    Field("expires", "Expires", "datetime", help="Empty: never (times in UTC)."),
    Field("conditions", "Conditions", "textarea"),
    Field("testmode", "A test card (only for test mode orders)", "bool"),
]
EDIT_FIELDS = [CARD_FIELDS[3], CARD_FIELDS[4]]
TRANSACT_FIELDS = [
    Field("value", "Amount", "decimal", required=True,
          help="Positive adds value, negative takes it, e.g. -10.00."),
    Field("text", "Note", help="Shown in the card's history."),
]  # fmt: skip


def base(ctx: OrgContext) -> str:
    return f"/control/organizer/{ctx.organizer_slug}/giftcards/"


async def _listed(ctx: OrgContext, res: Resource[Any], asked: dict[str, str],
                  filters: dict[str, str]) -> tuple[dict[str, Any], Errors]:  # fmt: skip
    """The API's list for the search's filters (and page); a refused filter as errors."""
    query = urlencode({k: v for k, v in {**filters, "page": asked.get("page", "")}.items() if v})
    try:
        return await listed(ctx, res, query), {}
    except FieldErrors as exc:
        return {"results": [], "count": 0}, {k: list(v) for k, v in exc.errors.items()}
    except APIError as exc:
        return {"results": [], "count": 0}, {"page": [exc.detail]}


def _keep(asked: dict[str, str], url: str | None) -> str:
    """The page link of the API's list as this page's query: the search kept, its page."""
    if not url:
        return ""
    number = parse_qs(urlsplit(url).query).get("page", ["1"])[0]
    return urlencode({**{k: v for k, v in asked.items() if k != "page"}, "page": number})


@router.get(PATH + "/")
@control_page(OrganizerAccess(READ))
async def giftcards(page: Page, ctx: OrgContext) -> Response:
    asked = dict(page.request.query_params)
    search = asked.get("search", "").strip()
    body, errors = await _listed(ctx, CARDS, asked, {"secret": search,
                                 "testmode": asked.get("testmode", "")})  # fmt: skip
    return render(page, "giftcards.html", nav=await organizer_nav(page, ctx, "giftcards"),
                  rows=body["results"], count=body["count"], next=_keep(asked, body.get("next")),
                  previous=_keep(asked, body.get("previous")),
                  base=base(ctx), asked=asked, errors=errors,
                  may_write=ctx.has_organizer_permission(WRITE))  # fmt: skip


async def _new(page: Page, ctx: OrgContext, values: dict[str, Any], errors: Errors,
               status: int = 200) -> Response:  # fmt: skip
    return render(page, "giftcard_new.html", status,
                  nav=await organizer_nav(page, ctx, "giftcards"), fields=CARD_FIELDS,
                  values=values, errors=errors, base=base(ctx))  # fmt: skip


@router.get(PATH + "/new")
@control_page(OrganizerAccess(WRITE))
async def giftcard_new(page: Page, ctx: OrgContext) -> Response:
    return await _new(page, ctx, defaults(CARD_FIELDS), {})


@router.post(PATH + "/new")
@control_page(OrganizerAccess(WRITE), form=True)
async def giftcard_create(page: Page, ctx: OrgContext, pairs: Pairs) -> Response:
    body = to_body(CARD_FIELDS, pairs)

    async def work() -> Any:
        return await CARDS.handle_create(with_body(ctx, body))

    created, errors = await run(page, ctx, work)
    if errors:
        return await _new(page, ctx, typed(CARD_FIELDS, pairs), errors, 400)
    page.web.flash(f"The gift card {created['secret']} was created.")
    return page.redirect(f"{base(ctx)}{created['id']}/")


async def _card(page: Page, ctx: OrgContext, id: str, errors: Errors | None = None,
                values: dict[str, Any] | None = None, status: int = 200,
                failed: str = "") -> Response:  # fmt: skip
    """The card's page; ``failed`` names the form (``transact`` or ``edit``) that ``errors``
    and ``values`` (what was typed) belong to."""
    card = await found(ctx, CARDS, id)
    if card is None:
        return no_such(page, "card")
    query = urlencode({"page": page.request.query_params.get("page", "")}) if (
        page.request.query_params.get("page")) else ""  # fmt: skip
    history = answer(await card_routes.transactions(id, with_body(ctx, None, "GET", query)))
    edit_values = values if failed == "edit" else to_form(EDIT_FIELDS, card)
    return render(page, "giftcard.html", status, nav=await organizer_nav(page, ctx, "giftcards"),
                  card=card, history=history["results"], next=history.get("next"),
                  previous=history.get("previous"), base=base(ctx), fields=TRANSACT_FIELDS,
                  values=(values if failed == "transact" else None) or {},
                  errors=(errors if failed == "transact" else None) or {},
                  edit_fields=EDIT_FIELDS, edit_values=edit_values or {},
                  edit_errors=(errors if failed == "edit" else None) or {},
                  changes=await organizer_history(ctx, "giftcard", card["id"]),
                  may_write=ctx.has_organizer_permission(WRITE))  # fmt: skip


@router.get(PATH + "/{id}/")
@control_page(OrganizerAccess(READ))
async def giftcard_page(page: Page, ctx: OrgContext, id: str) -> Response:
    return await _card(page, ctx, id)


@router.post(PATH + "/{id}/transact")
@control_page(OrganizerAccess(WRITE), form=True)
async def giftcard_transact(page: Page, ctx: OrgContext, pairs: Pairs, id: str) -> Response:
    body = to_body(TRANSACT_FIELDS, pairs)

    async def work() -> Any:
        return await card_routes.transact(id, with_body(ctx, body))

    _, errors = await run(page, ctx, work)
    if errors:
        return await _card(page, ctx, id, errors, typed(TRANSACT_FIELDS, pairs), 400, "transact")
    page.web.flash("The card's value was changed.")
    return page.redirect(f"{base(ctx)}{id}/")


@router.post(PATH + "/{id}/edit")
@control_page(OrganizerAccess(WRITE), form=True)
async def giftcard_update(page: Page, ctx: OrgContext, pairs: Pairs, id: str) -> Response:
    body = to_body(EDIT_FIELDS, pairs)

    async def work() -> Any:
        return await CARDS.handle_update(with_body(ctx, body, "PATCH"), id, partial=True)

    _, errors = await run(page, ctx, work)
    if errors:
        return await _card(page, ctx, id, errors, typed(EDIT_FIELDS, pairs), 400, "edit")
    page.web.flash("The card was saved.")
    return page.redirect(f"{base(ctx)}{id}/")
