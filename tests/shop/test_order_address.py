"""Changing the invoice address on the order page: checked as at checkout (the event's
required fields, a plausible VAT ID), the input kept with a sentence at the field when refused;
refused when it would change the order's taxes (reverse charge) or after the modification
deadline; stored as the API's order PATCH stores it, and where the event reissues invoices
after a change, the invoice in force cancelled and issued anew with the new address."""

from __future__ import annotations

import datetime as dt
import re

from sqlalchemy import select

from admit.models import Invoice, Order
from admit.models.checkin import Notification
from tests.invoices import helpers as ih
from tests.oauth.helpers import csrf
from tests.shop import helpers as h

ADDRESS = {
    "ia_name": "Ada Lovelace",
    "ia_street": "Hauptstr. 1",
    "ia_zipcode": "10115",
    "ia_city": "Berlin",
    "ia_country": "DE",
}


async def _ordered(client, world, factory, **settings):
    """A pending order placed on the pages with a private German address: the shop, the order
    page's path and the CSRF token."""
    shop = await h.setup(
        factory,
        world,
        invoice_address_asked=True,
        invoice_address_required=True,
        invoice_address_vatid=True,
        **settings,
    )
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = csrf((await client.get(front)).text)
    await client.post(f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.ticket.id}": "1"})
    r = await h.checkout_form(client, front, token, **ADDRESS)
    assert r.status_code == 303, r.text
    return shop, r.headers["location"], token


async def _stored(factory) -> dict:
    async with factory.sessionmaker() as session:
        return (await session.scalar(select(Order))).invoice_address  # type: ignore[union-attr]


async def test_the_buyer_changes_the_invoice_address(client, world, factory):
    _shop, page, token = await _ordered(client, world, factory)
    shown = (await client.get(page)).text
    assert "Change the invoice address" in shown and f'action="{page}address"' in shown
    assert 'id="ia_city" name="ia_city" autocomplete="address-level2" required value="Berlin"' in (
        shown
    )
    assert "Update prices" not in shown  # the order's prices stay
    new = {**ADDRESS, "ia_company": "Analytical Engines Ltd", "ia_city": "Hamburg",
           "ia_zipcode": "20095"}  # fmt: skip
    r = await client.post(f"{page}address", data={"csrf_token": token, **new})
    assert r.status_code == 303, r.text
    after = (await client.get(page)).text
    assert "Your invoice address has been saved." in after and 'value="Hamburg"' in after
    stored = await _stored(factory)
    assert stored["city"] == "Hamburg" and stored["company"] == "Analytical Engines Ltd"
    async with factory.sessionmaker() as session:
        kinds = set(await session.scalars(select(Notification.action)))
    assert "service.event.order.modified" in kinds
    same = await client.post(f"{page}address", data={"csrf_token": token, **new})
    assert same.status_code == 303
    assert "The invoice address is unchanged." in (await client.get(page)).text


async def test_a_refused_address_keeps_the_input_and_names_the_field(client, world, factory):
    _shop, page, token = await _ordered(client, world, factory)
    bad = {**ADDRESS, "ia_city": "", "ia_is_business": "yes", "ia_company": "Acme GmbH",
           "ia_vat_id": "DE12"}  # fmt: skip
    r = await client.post(f"{page}address", data={"csrf_token": token, **bad})
    assert r.status_code == 400
    assert "Your invoice address was not saved" in r.text
    assert 'aria-invalid="true" aria-describedby="ia_city-error"' in r.text
    assert re.search(r'id="ia_vat_id-error">This VAT ID does not look valid', r.text)
    assert 'value="Acme GmbH"' in r.text and 'value="DE12"' in r.text  # kept
    assert 'id="ia_is_business" name="ia_is_business" value="yes" checked' in r.text
    assert (await _stored(factory))["city"] == "Berlin"  # nothing written
    no_token = await client.post(f"{page}address", data=ADDRESS)
    assert no_token.status_code == 403


async def test_an_address_that_changes_the_taxes_is_refused(client, world, factory):
    shop, page, token = await _ordered(client, world, factory)
    await h.reverse_charge_rule(factory, shop)
    async with factory.sessionmaker() as session:  # the placed ticket under the rule
        from admit.models import OrderPosition, TaxRule

        rule = await session.scalar(select(TaxRule.id))
        position = await session.scalar(select(OrderPosition))
        position.tax_rule_id = rule  # type: ignore[union-attr]
        await session.commit()
    french_business = {"ia_is_business": "yes", "ia_company": "Société Exemple SARL",
                       "ia_street": "1 rue de la Paix", "ia_zipcode": "75002", "ia_city": "Paris",
                       "ia_country": "FR", "ia_vat_id": "FR40303265045"}  # fmt: skip
    r = await client.post(f"{page}address", data={"csrf_token": token, **french_business})
    assert r.status_code == 400
    assert "This address would change the taxes of your order" in r.text
    assert (await _stored(factory))["country"] == "DE"
    # a German business stays taxed as before: accepted
    german_business = {**ADDRESS, "ia_is_business": "yes", "ia_company": "Acme GmbH",
                       "ia_vat_id": "DE123456789"}  # fmt: skip
    r = await client.post(f"{page}address", data={"csrf_token": token, **german_business})
    assert r.status_code == 303, r.text
    assert (await _stored(factory))["company"] == "Acme GmbH"


async def test_after_the_deadline_the_address_can_not_be_changed(client, world, factory):
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat()
    _shop, page, token = await _ordered(client, world, factory, last_order_modification_date=past)
    shown = (await client.get(page)).text
    assert f'action="{page}address"' not in shown and "that date has passed" in shown
    r = await client.post(f"{page}address", data={"csrf_token": token, **ADDRESS})
    assert r.status_code == 400 and "that date has passed" in r.text


async def test_the_invoice_is_reissued_with_the_new_address(client, world, factory):
    _shop, page, token = await _ordered(
        client, world, factory, invoice_generate="True", invoice_reissue_after_modify=True,
        **ih.ISSUER,
    )  # fmt: skip
    async with factory.sessionmaker() as session:
        [first] = list(await session.scalars(select(Invoice)))
    assert first.invoice_to_city == "Berlin"
    new = {**ADDRESS, "ia_city": "Hamburg", "ia_zipcode": "20095"}
    r = await client.post(f"{page}address", data={"csrf_token": token, **new})
    assert r.status_code == 303, r.text
    async with factory.sessionmaker() as session:
        rows = list(await session.scalars(select(Invoice).order_by(Invoice.id)))
    assert [(i.is_cancellation, i.invoice_to_city) for i in rows] == [
        (False, "Berlin"),
        (True, "Berlin"),
        (False, "Hamburg"),
    ]
    assert rows[1].refers_id == first.id
    page_text = (await client.get(page)).text
    assert rows[2].full_invoice_no in page_text


async def test_without_reissue_the_invoice_keeps_its_address(client, world, factory):
    _shop, page, token = await _ordered(
        client, world, factory, invoice_generate="True", **ih.ISSUER
    )
    new = {**ADDRESS, "ia_city": "Hamburg", "ia_zipcode": "20095"}
    r = await client.post(f"{page}address", data={"csrf_token": token, **new})
    assert r.status_code == 303, r.text
    async with factory.sessionmaker() as session:
        rows = list(await session.scalars(select(Invoice)))
    assert [i.invoice_to_city for i in rows] == ["Berlin"]
    assert (await _stored(factory))["city"] == "Hamburg"


async def test_events_that_ask_no_address_offer_no_form(client, world, factory):
    shop = await h.setup(factory, world, invoice_address_asked=False)
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = csrf((await client.get(front)).text)
    await client.post(f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.ticket.id}": "1"})
    r = await h.checkout_form(client, front, token)
    page = r.headers["location"]
    assert "Change the invoice address" not in (await client.get(page)).text
    r = await client.post(f"{page}address", data={"csrf_token": token, **ADDRESS})
    assert r.status_code == 404


async def test_junk_in_the_address_form_is_a_sentence_never_a_500(client, world, factory):
    _shop, page, token = await _ordered(client, world, factory)
    for junk in (
        {**ADDRESS, "ia_country": "<script>"},
        {**ADDRESS, "ia_country": "ZZZZZZ"},
        {**ADDRESS, "ia_city": "x" * 5000, "ia_name": "\u00e9" * 3000},
        {**ADDRESS, "ia_is_business": "yes", "ia_vat_id": "DE" + "1" * 900},
        {"ia_street": "\x00\x01"},
    ):
        r = await client.post(f"{page}address", data={"csrf_token": token, **junk})
        assert r.status_code in (400, 303), (junk, r.status_code)
        if r.status_code == 400:
            assert "Your invoice address was not saved" in r.text or "Bad request" in r.text
    assert (await _stored(factory))["country"] == "DE"
