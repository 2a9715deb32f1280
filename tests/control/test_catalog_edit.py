"""Catalog editing in the back office: every form runs the API resource's own handler, so the
API's messages appear by the fields (input kept) and what is stored is what the API stores."""

from __future__ import annotations

from sqlalchemy import func, select

from admit.models import (
    CheckinList,
    Item,
    ItemCategory,
    ItemVariation,
    Notification,
    Question,
    QuestionOption,
    Quota,
    TaxRule,
    Voucher,
)
from tests.control.test_pages import _as
from tests.oauth.helpers import csrf


async def _token(web, url: str) -> str:
    page = await web.get(url)
    assert page.status_code == 200, page.text[:800]
    return csrf(page.text)


async def _count(factory, model, *where) -> int:
    async with factory.sessionmaker() as session:
        return await session.scalar(select(func.count()).select_from(model).where(*where))


async def test_product_created_edited_with_variations(web, people, factory, shop):
    await _as(web, people["boss"])
    base = shop.base + "products/"
    listing = await web.get(base)
    assert 'href="/control/event/acme/summit/products/new"' in listing.text
    token = await _token(web, base + "new")
    bad = await web.post(
        base + "new",
        data={"csrf_token": token, "name": "VIP", "default_price": "lots", "active": "1"},
    )
    assert bad.status_code == 400
    assert 'id="f-default_price-error"' in bad.text and 'value="lots"' in bad.text
    assert await _count(factory, Item) == 1
    good = await web.post(
        base + "new",
        data={
            "csrf_token": token,
            "name": "VIP",
            "default_price": "99.50",
            "active": "1",
            "admission": "1",
            "variations": "Floor\nBalcony = 120",
        },
    )
    assert good.status_code == 303, good.text[:800]
    url = good.headers["location"]
    async with factory.sessionmaker() as session:
        item = (await session.scalars(select(Item).where(Item.default_price == 99.5))).one()
        assert item.admission and item.active
        added = await session.scalar(
            select(func.count()).where(Notification.action == "service.event.item.added")
        )
        assert added == 2  # the fixture's product (through the API) and this one
    assert url == f"{base}{item.id}/"
    page = await web.get(url)
    assert 'value="VIP"' in page.text and "Variations" in page.text
    assert "Floor" in page.text and 'value="120.00"' in page.text
    add = await web.post(
        url + "variations/new",
        data={"csrf_token": token, "value": "Box", "default_price": "300", "active": "1"},
    )
    assert add.status_code == 303, add.text[add.text.find("<main") :][:3000]
    async with factory.sessionmaker() as session:
        names = {v.value["en"]: v for v in await session.scalars(select(ItemVariation))}
        assert set(names) == {"Floor", "Balcony", "Box"} and names["Box"].active
        variation = names["Balcony"]
    refused = await web.post(
        f"{url}variations/{variation.id}/",
        data={"csrf_token": token, "value": "", "default_price": "x"},
    )
    assert refused.status_code == 400
    assert f'id="variations-{variation.id}-default_price-error"' in refused.text
    edit = await web.post(url, data={"csrf_token": token, "name": "VIP+", "default_price": "99.50"})
    assert edit.status_code == 303
    async with factory.sessionmaker() as session:
        item = await session.get(Item, item.id)
        assert item.name == {"en": "VIP+"} and not item.active  # the box was left off
    history = (await web.get(url)).text
    history = history[history.index("<h2>History</h2>") :]
    # created, a variation added (a change of its product), changed: each by this user
    assert history.count("user Boss") == 3, history
    assert "Created" in history and history.count("Changed") == 2
    missing = await web.get(base + "999999/")
    assert missing.status_code == 404


async def test_category_tax_rule_quota_and_question(web, people, factory, shop):
    await _as(web, people["boss"])
    token = await _token(web, shop.base + "categories/new")
    made = await web.post(shop.base + "categories/new", data={"csrf_token": token, "name": "Main"})
    assert made.status_code == 303
    assert await _count(factory, ItemCategory) == 1
    bad_rate = await web.post(
        shop.base + "taxrules/new", data={"csrf_token": token, "name": "VAT", "rate": "abc"}
    )
    assert bad_rate.status_code == 400 and 'id="f-rate-error"' in bad_rate.text
    rate = await web.post(
        shop.base + "taxrules/new",
        data={"csrf_token": token, "name": "VAT", "rate": "19.00", "price_includes_tax": "1"},
    )
    assert rate.status_code == 303, rate.text[:800]
    assert await _count(factory, TaxRule) == 1
    taxes = await web.get(shop.base + "taxrules/")
    assert "19.00 %" in taxes.text
    quota = await web.post(
        shop.base + "quotas/new",
        data={"csrf_token": token, "name": "Gallery", "size": "30", "items": str(shop.item)},
    )
    assert quota.status_code == 303, quota.text[:800]
    page = await web.get(quota.headers["location"])
    assert "Available now" in page.text and "27 of 30" in page.text  # three orders hold one each
    bad_quota = await web.post(
        quota.headers["location"], data={"csrf_token": token, "name": "Gallery", "size": "-4"}
    )
    assert bad_quota.status_code == 400 and 'id="f-size-error"' in bad_quota.text
    question = await web.post(
        shop.base + "questions/new",
        data={
            "csrf_token": token,
            "question": "Meal?",
            "type": "C",
            "identifier": "MEAL",
            "items": str(shop.item),
        },
    )
    assert question.status_code == 303, question.text[:800]
    url = question.headers["location"]
    option = await web.post(
        url + "options/new", data={"csrf_token": token, "answer": "Vegan", "identifier": "V"}
    )
    assert option.status_code == 303, option.text[:800]
    assert await _count(factory, Question) == 1 and await _count(factory, QuestionOption) == 1
    clist = await web.post(
        shop.base + "checkinlists/new",
        data={"csrf_token": token, "name": "Side door", "all_products": "1"},
    )
    assert clist.status_code == 303, clist.text[:800]
    assert await _count(factory, CheckinList) == 2
    assert await _count(factory, Quota) == 2


async def test_vouchers_one_and_a_batch_listed_with_usage_and_tags(web, people, factory, shop):
    await _as(web, people["boss"])
    base = shop.base + "vouchers/"
    token = await _token(web, base + "new")
    one = await web.post(
        base + "new",
        data={
            "csrf_token": token,
            "code": "EARLYBIRD",
            "max_usages": "5",
            "price_mode": "set",
            "value": "10.00",
            "tag": "press",
        },
    )
    assert one.status_code == 303, one.text[one.text.find("<main") :][:3000]
    bad = await web.post(
        base + "batch",
        data={"csrf_token": token, "count": "3", "max_usages": "0", "price_mode": "none"},
    )
    assert bad.status_code == 400 and 'id="f-max_usages-error"' in bad.text
    assert await _count(factory, Voucher) == 1
    batch = await web.post(
        base + "batch",
        data={
            "csrf_token": token,
            "count": "3",
            "max_usages": "2",
            "price_mode": "none",
            "tag": "staff",
        },
    )
    assert batch.status_code == 303, batch.text[:800]
    assert await _count(factory, Voucher, Voucher.tag == "staff") == 3
    generated = await web.post(
        base + "new", data={"csrf_token": token, "max_usages": "1", "price_mode": "none"}
    )
    assert generated.status_code == 303  # the API's create route made the code
    async with factory.sessionmaker() as session:
        codes = set(await session.scalars(select(Voucher.code)))
        assert len(codes) == 5 and all(len(c) >= 5 for c in codes)
    listing = await web.get(base)
    assert "EARLYBIRD" in listing.text and "0 of 5" in listing.text
    assert '<option value="press"' in listing.text and '<option value="staff"' in listing.text
    staff = await web.get(base, params={"tag": "staff"})
    assert "EARLYBIRD" not in staff.text and staff.text.count("0 of 2") == 3


async def test_editing_one_language_keeps_the_others(web, people, factory, shop):
    async with factory.sessionmaker() as session:
        item = await session.get(Item, shop.item)
        item.name = {"en": "Ticket", "de": "Eintrittskarte"}
        await session.commit()
    await _as(web, people["boss"])
    url = f"{shop.base}products/{shop.item}/"
    token = await _token(web, url)
    saved = await web.post(
        url,
        data={"csrf_token": token, "name": "Day ticket", "default_price": "20.00", "active": "1"},
    )
    assert saved.status_code == 303, saved.text[saved.text.find("<main") :][:2000]
    async with factory.sessionmaker() as session:
        item = await session.get(Item, shop.item)
        assert item.name == {"en": "Day ticket", "de": "Eintrittskarte"}
