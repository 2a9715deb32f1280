"""The order page's forms beyond cancelling: changing attendee details and answers, and paying
a pending order with a gift card. A refused form shows the order page again (400) with its
sentences at the fields and the buyer's input kept; the request's transaction is rolled back.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from admit.kit.http.context import public_base_url
from admit.kit.http.errors import FieldErrors
from admit.models import UploadedFile
from admit.orders import buyer_mails
from admit.orders.payments import owed
from admit.shop import file_answers, i18n, order_address, order_details, order_giftcard, orders
from admit.shop.order_pages import OrderForm, form_route
from admit.shop.render import language
from admit.web.forms import Pairs, first

router = APIRouter(include_in_schema=False)


def _kept(pairs: Pairs) -> dict[str, list[str]]:
    kept: dict[str, list[str]] = {}
    for name, raw in pairs:
        if name != "csrf_token":
            kept.setdefault(name, []).append(raw[:5000])
    return kept


async def _new_files(
    request: Request, form: OrderForm, data: order_details.Form
) -> tuple[dict[str, UploadedFile], dict[str, str], bool]:
    """The new files of the form's file questions by field (sent now, checked and stored as at
    checkout, or kept from a refused try), the refusals by field, and whether any was stored
    now (to be committed)."""
    store = request.app.state.background.store
    quota = request.app.state.settings.upload_quota_bytes * file_answers.QUOTA_FACTOR
    found: dict[str, UploadedFile] = {}
    refused: dict[str, str] = {}
    stored = False
    try:
        for _position, _question, name in order_details.file_fields(data):
            incoming = form.files.files.get(name)
            if incoming is not None:
                try:
                    found[name] = await file_answers.store_incoming(
                        form.session, store, form.event, incoming, quota
                    )
                    stored = True
                except file_answers.FileRefused as exc:
                    refused[name] = str(exc)
                continue
            kept = first(form.pairs, f"{name}_kept")
            upload = await file_answers.kept_upload(form.session, form.event, kept)
            if upload is not None:
                found[name] = upload
    finally:
        form.files.close()
    return found, refused, stored


@form_route(router, "details")
async def change_details(request: Request, form: OrderForm) -> Response:
    session = form.session
    web, found, order, pairs = form.web, form.event, form.order, form.pairs
    _ = i18n.translator(language(web, found))
    refusal = await order_details.refusal(session, found, order)
    if refusal is not None:
        raise await form.refused(errors=[refusal])
    data = await order_details.form(session, found, order, language(web, found))
    if not data.anything:
        raise await form.refused(errors=["There is nothing to change."])
    files, errors, stored = await _new_files(request, form, data)
    if stored:  # committed, so a refused form keeps them: the order is locked (and read) anew
        await session.commit()
        order = await orders.find(session, found, order.code, order.secret, lock=True)
        if order is None:
            return web.not_found()
        refusal = await order_details.refusal(session, found, order)
        if refusal is not None:
            raise await form.refused(errors=[refusal])
        data = await order_details.form(session, found, order, language(web, found))
    if not errors:
        base = public_base_url(request)
        errors = await order_details.save(session, found, order, data, pairs, files, base)
    if errors:
        kept = _kept(pairs)
        for name, upload in files.items():
            kept[f"{name}_kept"] = [f"file:{upload.uuid}"]
        raise await form.refused(
            errors=[_("Your changes were not saved: please check the marked fields.")],
            kept=kept,
            field_errors=errors,
            kept_files={name: upload.filename for name, upload in files.items()},
        )
    web.web.flash(_("Your changes have been saved."))
    return web.redirect(form.here)


@form_route(router, "giftcard")
async def pay_with_gift_card(request: Request, form: OrderForm) -> Response:
    session = form.session
    web, found, order, pairs = form.web, form.event, form.order, form.pairs
    _ = i18n.translator(language(web, found))
    card = first(pairs, order_giftcard.FIELD).strip()[:190]
    buyer_mails.wanted(session, public_base_url(request))
    try:
        amount = await order_giftcard.pay(session, found, order, card)
    except FieldErrors as exc:
        message = " ".join(str(m) for ms in dict(exc.errors).values() for m in ms)
        raise await form.refused(
            kept={order_giftcard.FIELD: [card]},
            field_errors={order_giftcard.FIELD: message},
        ) from None
    paid = f"{amount:.2f} {found.currency}"
    if order.status == "p":
        web.web.flash(_("Your gift card paid %s: your order is paid.") % paid)
    else:
        rest = f"{owed(order):.2f} {found.currency}"
        web.web.flash(_("Your gift card paid %s; %s remain to be paid.") % (paid, rest))
    return web.redirect(form.here)


@form_route(router, "address")
async def change_address(request: Request, form: OrderForm) -> Response:
    session = form.session
    web, found, order = form.web, form.event, form.order
    _ = i18n.translator(language(web, found))
    if not order_address.offered(found):
        return web.not_found()
    refusal = await order_details.refusal(session, found, order)
    if refusal is not None:
        raise await form.refused(errors=[refusal])
    errors, note = await order_address.change(session, found, order, form.pairs)
    if errors:
        raise await form.refused(
            errors=[_("Your invoice address was not saved: please check the marked fields.")],
            kept=_kept(form.pairs),
            field_errors=errors,
        )
    web.web.flash(_(note) if note else _("Your invoice address has been saved."))
    return web.redirect(form.here)
