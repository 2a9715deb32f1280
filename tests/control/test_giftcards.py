"""A gift card's page in the back office: value booked through the API's ``transact`` (never
below zero, said in a sentence by the field), expiry and conditions changed through the API's
PATCH (refusals by the field, what was typed kept), and the card's history of changes with who
made them."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from admit.models import GiftCard, GiftCardTransaction
from tests.control.conftest import _post, sign_in
from tests.oauth.helpers import csrf

ORG = "/control/organizer/acme/giftcards/"


async def test_book_edit_and_history(web, api, people, factory, shop):
    card = await _post(api, shop.token, "/api/v1/organizers/acme/giftcards/",
                       {"value": "20.00", "currency": "EUR", "secret": "CARD-TWENTY"})  # fmt: skip
    await sign_in(web, factory, people["boss"])
    url = f"{ORG}{card['id']}/"
    page = await web.get(url)
    assert page.status_code == 200 and 'id="e-expires"' in page.text
    token = csrf(page.text)
    short = await web.post(url + "transact", data={"csrf_token": token, "value": "-20.01",
                                                   "text": "Too much"})  # fmt: skip
    assert short.status_code == 400
    assert "does not have sufficient credit" in short.text and 'value="-20.01"' in short.text
    booked = await web.post(url + "transact", data={"csrf_token": token, "value": "-20.00",
                                                    "text": "Dinner"})  # fmt: skip
    assert booked.status_code == 303
    bad = await web.post(url + "edit", data={"csrf_token": token, "expires": "soon",
                                             "conditions": "Weekdays only"})  # fmt: skip
    assert bad.status_code == 400 and 'id="e-expires-error"' in bad.text
    assert "Weekdays only</textarea>" in bad.text and 'value="soon"' in bad.text
    saved = await web.post(url + "edit", data={"csrf_token": token,
                                               "expires": "2040-03-01T12:30",
                                               "conditions": "Weekdays only"})  # fmt: skip
    assert saved.status_code == 303
    async with factory.sessionmaker() as session:
        row = (await session.scalars(select(GiftCard))).one()
        assert str(row.value) == "0.00" and row.conditions == "Weekdays only"
        assert row.expires == dt.datetime(2040, 3, 1, 12, 30, tzinfo=dt.UTC)
        texts = list(await session.scalars(select(GiftCardTransaction.text)))
        assert "Dinner" in texts and "Too much" not in texts
    after = (await web.get(url)).text
    assert 'value="2040-03-01T12:30"' in after
    history = after[after.index("<h2>History</h2>") :]
    assert history.index("Created") < history.index("Value booked by hand")
    assert history.index("Value booked by hand") < history.index("Changed")
    assert "API token" in history and history.count("user Boss") == 2
    other = await _post(api, shop.token, "/api/v1/organizers/acme/giftcards/",
                        {"value": "5.00", "currency": "EUR"})  # fmt: skip
    other_page = (await web.get(f"{ORG}{other['id']}/")).text
    assert "Value booked by hand" not in other_page[other_page.index("<h2>History</h2>") :]
    await sign_in(web, factory, people["reader"])
    token = csrf((await web.get("/logout")).text)
    refused = await web.post(url + "edit", data={"csrf_token": token, "conditions": "Any"})
    assert refused.status_code == 403 and "Not allowed" in refused.text
