"""The order page ``/{organizer}/{event}/order/{code}/{secret}/`` (the link every order mail
carries): status, positions, how to pay, ticket PDFs, and where the event allows: cancelling,
changing attendee details and answers, paying with a gift card (``order_forms.py``).
A wrong secret is the same 404 page as a missing order."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.events.settings import value
from admit.jobs.downloads import content_disposition
from admit.jobs.storage import StoredFileMissing
from admit.kit.http.context import Session, public_base_url
from admit.kit.http.errors import APIError
from admit.kit.resources.i18n import localized
from admit.models import Event, Order
from admit.orders import buyer_mails
from admit.shop import (
    address,
    catalog,
    countries,
    file_answers,
    order_address,
    order_details,
    order_giftcard,
    order_invoices,
    orders,
)
from admit.shop import buyer_mails as _mail_hooks  # noqa: F401  (registers the order hooks)
from admit.shop.multipart import Multipart, posted_form
from admit.shop.pages import Refused
from admit.shop.render import base_context, language
from admit.shop.render import page as render_page
from admit.shop.settings import SUCCESS_TEXT
from admit.uploads.service import read_upload
from admit.web.forms import Pairs
from admit.web.page import Page
from admit.web.render import SECURITY_HEADERS

router = APIRouter(include_in_schema=False)
ORDER = "/{organizer}/{event}/order/{code}/{secret}"


@router.get(f"{ORDER}/")
async def order_page(
    organizer: str, event: str, code: str, secret: str, request: Request, session: Session
) -> Response:
    web = await Page.load(request, session)
    found = await catalog.load_event(session, organizer, event)
    order = await orders.find(session, found, code, secret) if found else None
    if found is None or order is None:
        return web.not_found()
    return await show(web, found, organizer, order)


async def show(
    web: Page,
    found: Event,
    organizer: str,
    order: Order,
    status: int = 200,
    *,
    errors: list[str] | None = None,
    kept: dict[str, list[str]] | None = None,
    field_errors: dict[str, str] | None = None,
    kept_files: dict[str, str] | None = None,
) -> Response:
    """The order page; after a refused form, with its sentences (by field) and input kept
    (``kept_files``: the names of the files it sent, by field)."""
    session = web.session
    view = await orders.view(session, found, order)
    here = f"/{organizer}/{found.slug}/order/{order.code}/{order.secret}/"
    lang = language(web, found)
    details = await order_details.form(session, found, order, lang)
    offered = order_giftcard.offered(found, order)
    errors = list(errors or [])
    if not offered and (field_errors or {}).get(order_giftcard.FIELD):
        errors.append(field_errors[order_giftcard.FIELD])  # no form to show it at
    return render_page(
        web,
        "order.html",
        status,
        **base_context(found, organizer),
        view=view,
        order=order,
        here=here,
        invoicing=await order_invoices.listed(session, found, order),
        files=await file_answers.order_files(session, order),
        success_text=localized(value(found, SUCCESS_TEXT), order.locale),
        errors=errors,
        field_errors=field_errors or {},
        kept=_values(details, order, kept),
        details=details if details.anything else None,
        details_files=bool(order_details.file_fields(details)),
        kept_files={**order_details.current_files(details), **(kept_files or {})},
        accept=file_answers.ACCEPT,
        details_refused=await order_details.refusal(session, found, order),
        details_until=order_details.deadline(found),
        gift_card=offered,
        address_form=address.asked(found) if order_address.offered(found) else None,
        countries=countries.choices(),
    )


def _values(
    details: order_details.Form, order: Order, kept: dict[str, list[str]] | None
) -> dict[str, list[str]]:
    """The forms' values: what the order holds, the refused form's input in place of its own
    (each form is told by its fields: attendee details and answers, or ``ia_``)."""
    posted = kept or {}
    values: dict[str, list[str]] = {}
    if not any(k.startswith(("name_", "email_", "q_")) for k in posted):
        values.update(order_details.current(details))
    if not any(k.startswith("ia_") for k in posted):
        values.update(order_address.current(order))
    values.update(posted)
    return values


@dataclass
class OrderForm:
    """A form posted on the order page, opened: the order locked, the CSRF token checked."""

    web: Page
    session: AsyncSession
    organizer: str
    event: Event
    order: Order
    pairs: Pairs
    files: Multipart = field(default_factory=Multipart)  # a multipart form's files

    @property
    def here(self) -> str:
        return f"/{self.organizer}/{self.event.slug}/order/{self.order.code}/{self.order.secret}/"

    async def refused(self, **shown: Any) -> Refused:
        """The refusal: the order page as the database holds it (this request's work undone),
        with ``shown`` (sentences, the buyer's input kept)."""
        slug, code, secret = self.event.slug, self.order.code, self.order.secret
        await self.session.rollback()  # expires every object: read what is needed first
        found = await catalog.load_event(self.session, self.organizer, slug)
        order = await orders.find(self.session, found, code, secret) if found else None
        assert found is not None and order is not None
        return Refused(await show(self.web, found, self.organizer, order, 400, **shown))


async def open_form(
    request: Request, session: Session, organizer: str, event: str, code: str, secret: str
) -> OrderForm | Response:
    """The posted form opened, or the answer to give instead (404, the CSRF refusal)."""
    web = await Page.load(request, session)
    found = await catalog.load_event(session, organizer, event)
    order = await orders.find(session, found, code, secret, lock=True) if found else None
    if found is None or order is None:
        return web.not_found()
    posted = await posted_form(web, request)
    if isinstance(posted, Response):
        return posted
    return OrderForm(web, session, organizer, found, order, *posted)


FormHandler = Callable[[Request, OrderForm], Awaitable[Response]]


def form_route(on: APIRouter, action: str) -> Callable[[FormHandler], FormHandler]:
    """Registers ``handler`` for the order page's form ``{ORDER}/{action}``: it is called with
    the form opened (:func:`open_form`); a 404 or a refused CSRF token is answered for it."""

    def register(handler: FormHandler) -> FormHandler:
        async def route(
            organizer: str, event: str, code: str, secret: str, request: Request, session: Session
        ) -> Response:
            form = await open_form(request, session, organizer, event, code, secret)
            if isinstance(form, Response):
                return form
            return await handler(request, form)

        route.__name__ = route.__qualname__ = handler.__name__
        on.post(f"{ORDER}/{action}")(route)
        return handler

    return register


@form_route(router, "cancel")
async def order_cancel(request: Request, form: OrderForm) -> Response:
    session = form.session
    buyer_mails.wanted(session, public_base_url(request))
    try:
        await orders.cancel(session, form.event, form.order)
    except APIError as exc:
        form.web.web.flash(exc.detail)
    else:
        form.web.web.flash("Your order has been canceled.")
    return form.web.redirect(form.here)


async def _pdf(
    request: Request,
    session: Session,
    organizer: str,
    event: str,
    code: str,
    secret: str,
    position: int | None,
) -> Response:
    web = await Page.load(request, session)
    found = await catalog.load_event(session, organizer, event)
    order = await orders.find(session, found, code, secret) if found else None
    if found is None or order is None or not orders.tickets_allowed(found, order):
        return web.not_found()
    store = request.app.state.background.store
    pdf = await orders.ticket_pdf(session, store, found, order, position)
    if pdf is None:
        return web.not_found()
    name = f"{organizer}-{event}-{order.code}" + (f"-{position}" if position else "")
    headers = {
        **SECURITY_HEADERS,
        "Content-Disposition": f'attachment; filename="{name}.pdf"',
    }
    return Response(pdf, media_type="application/pdf", headers=headers)


@router.get(f"{ORDER}/tickets.pdf")
async def order_tickets(
    organizer: str, event: str, code: str, secret: str, request: Request, session: Session
) -> Response:
    return await _pdf(request, session, organizer, event, code, secret, None)


@router.get(f"{ORDER}/tickets/{{position}}.pdf")
async def position_ticket(
    organizer: str,
    event: str,
    code: str,
    secret: str,
    position: int,
    request: Request,
    session: Session,
) -> Response:
    return await _pdf(request, session, organizer, event, code, secret, position)


@router.get(f"{ORDER}/files/{{answer}}")
async def answer_file(
    organizer: str,
    event: str,
    code: str,
    secret: str,
    answer: str,
    request: Request,
    session: Session,
) -> Response:
    """A file the buyer uploaded as an answer, under the order's secret URL."""
    web = await Page.load(request, session)
    found = await catalog.load_event(session, organizer, event)
    order = await orders.find(session, found, code, secret) if found else None
    if found is None or order is None or not answer.isdigit() or len(answer) > 10:
        return web.not_found()
    upload = await file_answers.answer_upload(session, order, int(answer))
    if upload is None:
        return web.not_found()
    try:
        data = await read_upload(request.app.state.background.store, upload)
    except StoredFileMissing:
        return web.not_found()
    headers = {
        **SECURITY_HEADERS,
        "Content-Disposition": content_disposition(upload.filename),
        "X-Content-Type-Options": "nosniff",
    }
    return Response(data, media_type=upload.content_type, headers=headers)
