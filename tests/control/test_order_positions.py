"""Changing or canceling one ticket from the order's page, through the API's order change:
what is changed is stored and in the order's history, a refusal is shown by its field with
what was typed (nothing kept), the last ticket is never canceled alone."""

from __future__ import annotations

from sqlalchemy import update

from admit.models import Event
from tests.control.conftest import E, _post, sign_in
from tests.oauth.helpers import csrf


async def _two_tickets(api, shop) -> dict:
    body = {"email": "duo@example.org", "status": "p", "payment_provider": "banktransfer",
            "positions": [{"item": shop.item, "attendee_name": "Kit One"},
                          {"item": shop.item, "attendee_name": "Kit Two"}]}  # fmt: skip
    return await _post(api, shop.token, f"{E}/orders/", body)


async def _order(api, shop, code: str) -> dict:
    headers = {"Authorization": f"Token {shop.token}"}
    params = {"include_canceled_positions": "true"}
    response = await api.get(f"{E}/orders/{code}/", headers=headers, params=params)
    assert response.status_code == 200
    return response.json()


async def test_change_a_ticket(web, api, factory, people, shop):
    order = await _two_tickets(api, shop)
    shirt = await _post(api, shop.token, f"{E}/items/", {
        "name": {"en": "Shirt"}, "default_price": "10.00",
        "variations": [{"value": {"en": "S"}}, {"value": {"en": "L"}}]})  # fmt: skip
    small = shirt["variations"][0]["id"]
    await _post(api, shop.token, f"{E}/quotas/", {"name": "Shirts", "size": 5,
                "items": [shirt["id"]], "variations": [small]})  # fmt: skip
    await sign_in(web, factory, people["boss"])
    code, pos = order["code"], order["positions"][1]["id"]
    detail = await web.get(f"{shop.base}orders/{code}/")
    assert f'orders/{code}/positions/{pos}/"' in detail.text
    url = f"{shop.base}orders/{code}/positions/{pos}/"
    form = await web.get(url)
    assert (
        form.status_code == 200 and 'value="Kit Two"' in form.text and 'value="20.00"' in form.text
    )
    assert f'<option value="{shirt["id"]}-{small}">Shirt – S</option>' in form.text
    assert f'<option value="{shirt["id"]}">' not in form.text  # only as its variations
    token = csrf(form.text)
    base = {"csrf_token": token, "product": str(shop.item), "price": "20.00",
            "attendee_name": "Kit Two", "attendee_email": ""}  # fmt: skip
    same = await web.post(url + "change", data=base)
    assert same.status_code == 400 and "Nothing was changed" in same.text
    bad = await web.post(url + "change", data={**base, "price": "lots", "attendee_name": "Kept"})
    assert bad.status_code == 400 and 'id="price-error"' in bad.text
    assert 'value="lots"' in bad.text and 'value="Kept"' in bad.text
    mail = await web.post(url + "change", data={**base, "attendee_email": "not-an-address"})
    assert mail.status_code == 400 and 'id="attendee_email-error"' in mail.text
    bare = await web.post(url + "change", data={**base, "product": str(shirt["id"])})
    assert bare.status_code == 400 and 'id="product-error"' in bare.text
    assert "variation" in bare.text
    assert (await _order(api, shop, code))["positions"][1]["attendee_name"] == "Kit Two"
    forged = await web.post(url + "change", data={**base, "csrf_token": "forged"})
    assert forged.status_code == 403
    done = await web.post(url + "change", data={**base, "product": f"{shirt['id']}-{small}",
                                                "price": "12.50", "attendee_name": "Kit Too",
                                                "attendee_email": "kit@example.org"})  # fmt: skip
    assert done.status_code == 303, done.text[done.text.find("<main") :][:1500]
    changed = (await _order(api, shop, code))["positions"][1]
    assert (changed["item"], changed["variation"], changed["price"]) == (
        shirt["id"],
        small,
        "12.50",
    )
    assert changed["attendee_name"] == "Kit Too" and changed["attendee_email"] == "kit@example.org"
    after = await web.get(f"{shop.base}orders/{code}/")
    assert "was changed" in after.text and "Kit Too" in after.text
    history = after.text[after.text.find("<h2>History") :]
    assert "A ticket&#39;s product changed</td><td>user Boss" in history
    assert "A ticket&#39;s price changed</td><td>user Boss" in history


async def test_cancel_one_ticket_but_never_the_last(web, api, factory, people, shop):
    order = await _two_tickets(api, shop)
    code = order["code"]
    first_pos, second_pos = (p["id"] for p in order["positions"])
    await sign_in(web, factory, people["boss"])
    confirm = await web.get(f"{shop.base}orders/{code}/positions/{second_pos}/cancel")
    assert confirm.status_code == 200 and 'id="cancel-position"' in confirm.text
    token = csrf(confirm.text)
    done = await web.post(f"{shop.base}orders/{code}/positions/{second_pos}/cancel",
                          data={"csrf_token": token})  # fmt: skip
    assert done.status_code == 303
    stored = await _order(api, shop, code)
    assert [p["canceled"] for p in stored["positions"]] == [False, True]
    assert stored["total"] == "20.00"
    gone = await web.get(f"{shop.base}orders/{code}/positions/{second_pos}/cancel")
    assert gone.status_code == 404
    last = await web.get(f"{shop.base}orders/{code}/positions/{first_pos}/cancel")
    assert last.status_code == 200 and "only ticket" in last.text
    assert 'id="cancel-position"' not in last.text
    refused = await web.post(f"{shop.base}orders/{code}/positions/{first_pos}/cancel",
                             data={"csrf_token": token})  # fmt: skip
    assert refused.status_code == 400 and "would leave the order empty" in refused.text
    assert [p["canceled"] for p in (await _order(api, shop, code))["positions"]] == [False, True]
    history = await web.get(f"{shop.base}orders/{code}/")
    assert "A ticket was canceled" in history.text


async def test_a_reader_may_not_change_tickets(web, api, factory, people, shop):
    order = await _two_tickets(api, shop)
    await sign_in(web, factory, people["reader"])
    pos = order["positions"][0]["id"]
    page = await web.get(f"{shop.base}orders/{order['code']}/")
    assert "/positions/" not in page.text
    assert (await web.get(f"{shop.base}orders/{order['code']}/positions/{pos}/")).status_code == 403


async def test_add_a_ticket_to_an_order(web, api, factory, people, shop):
    """A new ticket through the API's order change: priced as the product when no price is
    typed, refused by its field when its quota has no room (the input kept, nothing added)."""
    order = await _two_tickets(api, shop)
    full = await _post(api, shop.token, f"{E}/items/", {"name": {"en": "Gala"},
                                                         "default_price": "30.00"})  # fmt: skip
    await _post(api, shop.token, f"{E}/quotas/", {"name": "Gala", "size": 0,
                                                  "items": [full["id"]]})  # fmt: skip
    await sign_in(web, factory, people["boss"])
    code = order["code"]
    detail = await web.get(f"{shop.base}orders/{code}/")
    assert f'orders/{code}/positions/new"' in detail.text
    url = f"{shop.base}orders/{code}/positions/new"
    form = await web.get(url)
    assert form.status_code == 200 and f'<option value="{full["id"]}">Gala</option>' in form.text
    token = csrf(form.text)
    refused = await web.post(url, data={"csrf_token": token, "product": str(full["id"]),
                                        "attendee_name": "Kit Three"})  # fmt: skip
    assert refused.status_code == 400 and 'value="Kit Three"' in refused.text
    assert "quota" in refused.text.lower()
    assert len((await _order(api, shop, code))["positions"]) == 2
    junk = await web.post(url, data={"csrf_token": token, "product": str(shop.item),
                                     "price": "lots"})  # fmt: skip
    assert junk.status_code == 400 and 'id="price-error"' in junk.text
    added = await web.post(url, data={"csrf_token": token, "product": str(shop.item),
                                      "attendee_name": "Kit Three"})  # fmt: skip
    assert added.status_code == 303, added.text[added.text.find("<main") :][:1500]
    after = await _order(api, shop, code)
    assert [p["attendee_name"] for p in after["positions"]] == ["Kit One", "Kit Two", "Kit Three"]
    assert after["positions"][2]["price"] == "20.00" and after["total"] == "60.00"
    page = await web.get(f"{shop.base}orders/{code}/")
    assert "A ticket was added" in page.text


async def test_move_a_ticket_to_another_date_of_a_series(web, api, factory, people, shop):
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Event).where(Event.slug == "summit").values(has_subevents=True)
        )
        await session.commit()
    days = []
    for day, name in ((1, "Day one"), (2, "Day two")):
        date = {"name": {"en": name}, "date_from": f"2030-05-0{day}T10:00:00Z", "active": True}
        sub = await _post(api, shop.token, f"{E}/subevents/", date)
        quota = {"name": name, "size": 5, "subevent": sub["id"], "items": [shop.item]}
        await _post(api, shop.token, f"{E}/quotas/", quota)
        days.append(sub["id"])
    body = {"email": "day@example.org", "positions": [{"item": shop.item, "subevent": days[0]}]}
    order = await _post(api, shop.token, f"{E}/orders/", body)
    await sign_in(web, factory, people["boss"])
    code, pos = order["code"], order["positions"][0]["id"]
    url = f"{shop.base}orders/{code}/positions/{pos}/"
    form = await web.get(url)
    assert f'<option value="{days[0]}" selected>Day one – 2030-05-01 10:00</option>' in form.text
    token = csrf(form.text)
    base = {"csrf_token": token, "product": str(shop.item), "price": order["positions"][0]["price"],
            "attendee_name": "", "attendee_email": ""}  # fmt: skip
    junk = await web.post(url + "change", data={**base, "subevent": "99999999"})
    assert junk.status_code == 400 and 'id="subevent-error"' in junk.text
    moved = await web.post(url + "change", data={**base, "subevent": str(days[1])})
    assert moved.status_code == 303, moved.text[moved.text.find("<main") :][:1500]
    assert (await _order(api, shop, code))["positions"][0]["subevent"] == days[1]
    new = f"{shop.base}orders/{code}/positions/new"
    added = await web.post(new, data={"csrf_token": token, "product": str(shop.item),
                                      "subevent": str(days[0])})  # fmt: skip
    assert added.status_code == 303, added.text[added.text.find("<main") :][:1500]
    positions = (await _order(api, shop, code))["positions"]
    assert [p["subevent"] for p in positions] == [days[1], days[0]]
