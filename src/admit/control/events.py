"""Events in the back office: create one (empty, or a copy of another of the organizer's
through the API's clone), edit its basic settings, and take it live or into test mode.

Every write is the API's own handler run with the form as its JSON body
(:mod:`admit.control.api_call`): creating is ``events.routes._create`` (``clone_from``
resolved by the API's ``_readable_event``, so a user may only copy what they may read),
editing is the event's PATCH and the settings' PATCH in one transaction, going live is the
PATCH of ``live`` whose refusal lists the API's go-live problems (``service.live_issues``),
which the page also shows in advance.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.api_call import Errors, run, with_body
from admit.control.fields import Field, to_body, to_form, typed
from admit.control.history import audit_history
from admit.control.nav import event_nav, event_url, organizer_nav
from admit.control.render import render
from admit.events import routes as event_routes
from admit.events import service, settings_routes
from admit.events import settings as event_settings
from admit.events.plugins import PLUGINS
from admit.events.schemas import EventDetailOut, EventIn
from admit.kit.http.context import EventAccess, EventContext, OrganizerAccess, OrgContext
from admit.kit.resources.crud import validate_input
from admit.web.forms import Pairs, first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
EVENT = "/control/event/{organizer}/{event}"
CREATE = "organizer.events:create"
GENERAL = event_settings.GENERAL
PAYMENT = event_settings.PAYMENT

NEW_FIELDS = [
    Field("name", "Name", "i18n", required=True),
    Field("slug", "Short name (in the shop's address)", required=True,
          help="Letters, digits, dots and dashes."),
    Field("date_from", "Begins", "datetime", required=True),
    Field("date_to", "Ends", "datetime"),
    Field("timezone", "Time zone", required=True, help="For example Europe/Berlin."),
    Field("currency", "Currency", required=True, help="Three letters, e.g. EUR."),
]  # fmt: skip
EVENT_FIELDS = [
    Field("name", "Name", "i18n", required=True),
    Field("date_from", "Begins", "datetime", required=True),
    Field("date_to", "Ends", "datetime"),
    Field("date_admission", "Admission", "datetime"),
    Field("presale_start", "Sales start", "datetime"),
    Field("presale_end", "Sales end", "datetime"),
    Field("location", "Location", "i18n"),
    Field("timezone", "Time zone", required=True),
    Field("currency", "Currency", required=True),
    Field("is_public", "Listed publicly", "bool"),
    Field("plugins", "Plugins", "multi", choices=[(p, p) for p in PLUGINS],
          help="Payment methods need their plugin (banktransfer, manualpayment)."),
]  # fmt: skip
SETTING_FIELDS = [
    Field("frontpage_text", "Text on the shop's front page", "i18n"),
    Field("contact_mail", "Contact address"),
    Field("ticket_secret_generator", "Ticket codes", "select", required=True,
          choices=[("random", "random"), ("pretix_sig1", "signed (pretix_sig1)")]),
]  # fmt: skip
PAYMENT_FIELDS = [
    Field("payment_term_days", "Payment term in days", "number", required=True),
    Field("payment_manual__enabled", "Manual payment", "bool"),
    Field("payment_banktransfer__enabled", "Bank transfer", "bool"),
    Field("payment_banktransfer_bank_details_sepa_name", "Account holder"),
    Field("payment_banktransfer_bank_details_sepa_iban", "IBAN"),
    Field("payment_banktransfer_bank_details_sepa_bic", "BIC"),
    Field("payment_banktransfer_bank_details_sepa_bank", "Bank"),
    Field("payment_banktransfer__fee_abs", "Bank transfer fee: fixed amount",
          help="Added to the order when the buyer pays by bank transfer."),
    Field("payment_banktransfer__fee_percent", "Bank transfer fee: percentage"),
    Field("payment_banktransfer__fee_reverse_calc", "Calculate the fee back", "bool",
          help="The percentage is taken so that you receive the total after the payment "
          "service took its percentage of everything the buyer pays."),
    Field("tax_rule_payment", "Tax on payment fees", "select",
          choices=[("default", "the event's default tax rule"), ("none", "no tax")]),
]  # fmt: skip


def _current(ctx: OrgContext, event: Any) -> dict[str, Any]:
    """The event as the API's GET shows it."""
    return event_routes._serialize(ctx, event, EventDetailOut)


# -- create ------------------------------------------------------------------------------


def _sources(nav: Any) -> list[tuple[str, str]]:
    return [(e["slug"], e["name"]) for e in nav.events]


async def _new_page(
    page: Page, ctx: OrgContext, values: dict[str, Any], errors: Errors, status: int = 200
) -> Response:
    nav = await organizer_nav(page, ctx)
    clone = Field("clone_from", "Copy products, quotas and settings from", "select",
                  choices=_sources(nav))  # fmt: skip
    return render(page, "event_new.html", status, nav=nav, fields=NEW_FIELDS, clone=[clone],
                  values=values, errors=errors)  # fmt: skip


@router.get("/control/organizer/{organizer}/events/new")
@control_page(OrganizerAccess(CREATE))
async def new_event(page: Page, ctx: OrgContext) -> Response:
    values = {"timezone": "UTC", "currency": "EUR"}
    return await _new_page(page, ctx, values, {})


@router.post("/control/organizer/{organizer}/events/new")
@control_page(OrganizerAccess(CREATE), form=True)
async def create_event(page: Page, ctx: OrgContext, pairs: Pairs) -> Response:
    tz = first(pairs, "timezone").strip() or "UTC"
    body = to_body(NEW_FIELDS, pairs, tz)
    source_slug = first(pairs, "clone_from").strip()

    async def work() -> Any:
        source = await event_routes._readable_event(ctx, source_slug) if source_slug else None
        return await event_routes._create(with_body(ctx, body), source)

    created, errors = await run(page, ctx, work)
    if errors:
        values = {**typed(NEW_FIELDS, pairs), "clone_from": source_slug}
        return await _new_page(page, ctx, values, errors, 400)
    page.web.flash("The event was created. It is not live yet.")
    return page.redirect(event_url(ctx.organizer_slug, created["slug"]) + "settings/")


# -- settings ------------------------------------------------------------------------------


def _setting_fields(ctx: EventContext) -> list[Field]:
    """The settings this user may change (payment keys need their own permission)."""
    may_pay = ctx.has_event_permission(ctx.event.id, PAYMENT)
    return SETTING_FIELDS + (PAYMENT_FIELDS if may_pay else [])


async def _settings_page(
    page: Page, ctx: EventContext, values: dict[str, Any] | None, errors: Errors,
    status: int = 200,
) -> Response:  # fmt: skip
    if values is None:
        tz = ctx.event.timezone or "UTC"
        stored = await event_settings.load(ctx.session, ctx.event)
        values = {**to_form(EVENT_FIELDS, _current(ctx, ctx.event), tz),
                  **to_form(_setting_fields(ctx), stored, tz)}  # fmt: skip
    nav = await event_nav(page, ctx, "settings")
    return render(page, "event_settings.html", status, nav=nav, event_fields=EVENT_FIELDS,
                  setting_fields=SETTING_FIELDS,
                  payment_fields=[f for f in _setting_fields(ctx) if f in PAYMENT_FIELDS],
                  values=values, errors=errors,
                  history=await audit_history(ctx, "event", ctx.event.id))  # fmt: skip


@router.get(EVENT + "/settings/")
@control_page(EventAccess(GENERAL))
async def event_settings_page(page: Page, ctx: EventContext) -> Response:
    return await _settings_page(page, ctx, None, {})


@router.post(EVENT + "/settings/")
@control_page(EventAccess(GENERAL), form=True)
async def save_event_settings(page: Page, ctx: EventContext, pairs: Pairs) -> Response:
    tz = first(pairs, "timezone").strip() or "UTC"
    event_body = to_body(EVENT_FIELDS, pairs, tz, _current(ctx, ctx.event))
    stored = await event_settings.load(ctx.session, ctx.event)
    settings_body = to_body(_setting_fields(ctx), pairs, tz, stored)
    settings_body["timezone"] = event_body["timezone"]  # one value, kept in both places

    async def work() -> Any:
        await event_routes._update(with_body(ctx, event_body, "PATCH"), partial=True)
        return await settings_routes.patch_settings(with_body(ctx, settings_body, "PATCH"))

    _, errors = await run(page, ctx, work)
    if errors:
        values = {**typed(EVENT_FIELDS, pairs), **typed(_setting_fields(ctx), pairs)}
        return await _settings_page(page, ctx, values, errors, 400)
    page.web.flash("The event's settings were saved.")
    return page.redirect(event_url(ctx.organizer_slug, ctx.event.slug) + "settings/")


# -- live and test mode -----------------------------------------------------------------

SWITCHES: dict[str, tuple[dict[str, bool], str]] = {
    "live": ({"live": True}, "The shop is live."),
    "offline": ({"live": False}, "The shop is offline."),
    "test_on": ({"testmode": True}, "Test mode is on: orders placed now are test orders."),
    "test_off": ({"testmode": False}, "Test mode is off."),
}


async def _issues(ctx: EventContext) -> list[str]:
    """What keeps the event from going live, by the API's own check."""
    current = _current(ctx, ctx.event)
    data = validate_input(EventIn, {k: current[k] for k in EventIn.model_fields if k in current})
    assert isinstance(data, EventIn)
    return await service.live_issues(ctx.session, ctx.event, data)


async def _live_page(page: Page, ctx: EventContext, errors: Errors, status: int = 200) -> Response:
    nav = await event_nav(page, ctx, "live")
    return render(page, "event_live.html", status, nav=nav, issues=await _issues(ctx),
                  live=ctx.event.live, testmode=ctx.event.testmode, errors=errors)  # fmt: skip


@router.get(EVENT + "/live/")
@control_page(EventAccess(GENERAL))
async def live_page(page: Page, ctx: EventContext) -> Response:
    return await _live_page(page, ctx, {})


@router.post(EVENT + "/live/")
@control_page(EventAccess(GENERAL), form=True)
async def switch_live(page: Page, ctx: EventContext, pairs: Pairs) -> Response:
    choice = SWITCHES.get(first(pairs, "action"))
    if choice is None:
        return await _live_page(page, ctx, {"action": ["Choose one of the buttons."]}, 400)
    body, done = choice

    async def work() -> Any:
        return await event_routes._update(with_body(ctx, body, "PATCH"), partial=True)

    _, errors = await run(page, ctx, work)
    if errors:
        return await _live_page(page, ctx, errors, 400)
    page.web.flash(done)
    return page.redirect(event_url(ctx.organizer_slug, ctx.event.slug) + "live/")
