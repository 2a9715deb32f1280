"""The organizer's customers in the back office: found by part of their e-mail or name or by
their ID, paged; a customer's page with their orders and memberships; the form that changes
them runs the API's update, so its refusals are shown by the fields with what was typed."""

from __future__ import annotations

from sqlalchemy import select

from admit.models import Customer
from tests.control.conftest import E, _post, sign_in
from tests.oauth.helpers import csrf

ORG = "/control/organizer/acme/customers/"
CUSTOMERS = "/api/v1/organizers/acme/customers/"


async def _customer(api, shop, email: str, name: str) -> str:
    made = await _post(api, shop.token, CUSTOMERS,
                       {"email": email, "name_parts": {"full_name": name}})  # fmt: skip
    return made["identifier"]


async def test_list_searched_by_part_of_address_name_or_id_and_paged(
    web, api, people, factory, shop
):
    kim = await _customer(api, shop, "kim@example.org", "Kim Lee")
    await _customer(api, shop, "max@example.com", "Max Mustermann")
    await sign_in(web, factory, people["boss"])
    everyone = await web.get(ORG)
    assert everyone.status_code == 200 and "2 customers." in everyone.text
    assert f'href="{ORG}{kim}/"' in everyone.text
    for search in ("KIM@", "lee", kim.lower(), "example.org"):
        found = await web.get(ORG, params={"search": search})
        assert "1 customer." in found.text and "Kim Lee" in found.text, search
        assert "Max Mustermann" not in found.text
    assert "0 customers." in (await web.get(ORG, params={"search": "100%"})).text
    too_long = await web.get(ORG, params={"search": "x" * 200})
    assert too_long.status_code == 400 and "Search for at most 190 characters." in too_long.text
    assert (await web.get(ORG, params={"page": "zwei"})).status_code == 400
    async with factory.sessionmaker() as session:  # 51 more: a second page
        org_id = await session.scalar(select(Customer.organizer_id))
        for n in range(51):
            session.add(Customer(organizer_id=org_id, identifier=f"P{n:04d}",
                                 email=f"p{n}@example.net"))  # fmt: skip
        await session.commit()
    first = await web.get(ORG)
    assert "53 customers." in first.text and 'href="?page=2"' in first.text
    second = await web.get(ORG, params={"page": "2"})
    assert second.text.count('<th scope="row">') == 3 and 'href="?page=1"' in second.text
    await sign_in(web, factory, people["reader"])
    assert (await web.get(ORG)).status_code == 403


async def test_customer_page_orders_memberships_and_edit(web, api, people, factory, shop):
    kim = await _customer(api, shop, "kim@example.org", "Kim Lee")
    await _customer(api, shop, "max@example.com", "Max Mustermann")
    body = {"email": "kim@example.org", "customer": kim,
            "positions": [{"item": shop.item, "attendee_name": "Kim"}]}  # fmt: skip
    order = await _post(api, shop.token, f"{E}/orders/", body)
    kind = await _post(api, shop.token, "/api/v1/organizers/acme/membershiptypes/",
                       {"name": {"en": "Season pass"}})  # fmt: skip
    season = {"customer": kim, "membership_type": kind["id"],
              "date_start": "2030-01-01T00:00:00Z", "date_end": "2030-12-31T00:00:00Z"}  # fmt: skip
    await _post(api, shop.token, "/api/v1/organizers/acme/memberships/", season)
    await sign_in(web, factory, people["boss"])
    url = f"{ORG}{kim}/"
    page = await web.get(url)
    assert page.status_code == 200
    assert f"/control/event/acme/summit/orders/{order['code']}/" in page.text
    assert shop.orders[0]["code"] not in page.text  # another buyer's order
    assert "Season pass" in page.text and "2030-12-31" in page.text
    token = csrf(page.text)
    taken = await web.post(url, data={"csrf_token": token, "name": "Kim Park",
                                      "email": "max@example.com", "is_active": "1"})  # fmt: skip
    assert taken.status_code == 400
    assert 'id="f-email-error"' in taken.text and 'value="Kim Park"' in taken.text
    bad = await web.post(url, data={"csrf_token": token, "name": "Kim", "email": "not-mail"})
    assert bad.status_code == 400 and 'id="f-email-error"' in bad.text
    saved = await web.post(url, data={"csrf_token": token, "name": "Kim Park",
                                      "email": "kim.park@example.org"})  # fmt: skip
    assert saved.status_code == 303
    async with factory.sessionmaker() as session:
        row = (await session.scalars(select(Customer).where(Customer.identifier == kim))).one()
        assert (row.email, row.name_cached, row.is_active) == ("kim.park@example.org",
                                                               "Kim Park", False)  # fmt: skip
    after = (await web.get(url)).text
    history = after[after.index("<h2>History</h2>") :]
    assert "Created" in history and "API token" in history
    assert "Changed" in history and "user Boss" in history
    assert (await web.get(f"{ORG}NOSUCH/")).status_code == 404
    await sign_in(web, factory, people["outsider"])
    assert (await web.get(url)).status_code == 403
