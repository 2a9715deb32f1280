"""The back office's event settings page has the bank transfer fee (issue 30): typed, saved
through the settings API's own handler, a bad amount refused by its field with the input kept."""

from __future__ import annotations

from sqlalchemy import select

from admit.models import Event
from tests.control.test_events import _form, settings_form
from tests.control.test_pages import _as


async def test_the_bank_transfer_fee_is_set_in_the_back_office(web, people, factory, shop):
    await _as(web, people["boss"])
    url = shop.base + "settings/"
    token = await _form(web, url)
    page = (await web.get(url)).text
    assert 'name="payment_banktransfer__fee_abs"' in page and 'name="tax_rule_payment"' in page
    form = settings_form(
        token,
        payment_banktransfer__fee_abs="1.5x",
        payment_banktransfer__fee_percent="2.9",
        payment_banktransfer__fee_reverse_calc="1",
        tax_rule_payment="none",
    )
    bad = await web.post(url, data=form)
    assert bad.status_code == 400
    assert "A valid number is required." in bad.text and 'value="1.5x"' in bad.text
    good = await web.post(url, data={**form, "payment_banktransfer__fee_abs": "1.50"})
    assert good.status_code == 303, good.text[:1500]
    async with factory.sessionmaker() as session:
        event = (await session.scalars(select(Event).where(Event.slug == "summit"))).one()
    got = {k: event.settings.get(k) for k in form if k.startswith(("payment_b", "tax_rule"))}
    assert got == {
        "payment_banktransfer__fee_abs": "1.50",
        "payment_banktransfer__fee_percent": "2.90",
        "payment_banktransfer__fee_reverse_calc": True,
        "tax_rule_payment": "none",
    }
