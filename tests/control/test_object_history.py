"""The History section of a product's, quota's and voucher's page: the changes recorded for
that object only (the notifications outbox), each with who made it (an API token, a user of
the back office)."""

from __future__ import annotations

import pytest

from tests.control.conftest import history_of, made_then_edited


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
    made, history = await made_then_edited(
        web, api, people, factory, shop, area, api_path, body, form
    )
    assert "Created" in history and "API token" in history
    assert "Changed" in history and "user Boss" in history
    assert history.index("Created") < history.index("Changed")
    # the fixture's own product and quota, made by the same token: not this object's rows
    other = {"products": shop.item, "quotas": shop.quota, "vouchers": made["id"]}[area]
    if other != made["id"]:
        others = history_of((await web.get(f"{shop.base}{area}/{other}/")).text)
        assert "user Boss" not in others and "Created" in others
