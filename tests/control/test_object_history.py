"""The History section of a product's, quota's and voucher's page: the changes recorded for
that object only (the notifications outbox), each with who made it (an API token, a user of
the back office)."""

from __future__ import annotations

import pytest

from tests.control.conftest import E, _post, sign_in
from tests.oauth.helpers import csrf


def _history(page: str) -> str:
    return page[page.index("<h2>History</h2>") :]


@pytest.mark.parametrize(
    ("area", "api_path", "body", "form"),
    [
        ("products", "items", {"name": {"en": "Shirt"}, "default_price": "5.00"},
         {"name": "Shirt", "default_price": "6.00"}),
        ("quotas", "quotas", {"name": "Balcony", "size": 10}, {"name": "Balcony", "size": "12"}),
        ("vouchers", "vouchers", {"code": "HISTORY1"},
         {"code": "HISTORY1", "max_usages": "3", "price_mode": "none"}),
    ],
)  # fmt: skip
async def test_history_of_an_object_names_who_changed_it(
    web, api, people, factory, shop, area, api_path, body, form
):
    made = await _post(api, shop.token, f"{E}/{api_path}/", body)
    await sign_in(web, factory, people["boss"])
    url = f"{shop.base}{area}/{made['id']}/"
    token = csrf((await web.get(url)).text)
    saved = await web.post(url, data={"csrf_token": token, **form})
    assert saved.status_code == 303, saved.text[saved.text.find("<main") :][:1500]
    history = _history((await web.get(url)).text)
    assert "Created" in history and "API token" in history
    assert "Changed" in history and "user Boss" in history
    assert history.index("Created") < history.index("Changed")
    # the fixture's own product and quota, made by the same token: not this object's rows
    other = {"products": shop.item, "quotas": shop.quota, "vouchers": made["id"]}[area]
    if other != made["id"]:
        others = _history((await web.get(f"{shop.base}{area}/{other}/")).text)
        assert "user Boss" not in others and "Created" in others
