"""A product's add-ons and bundles, discounts, and deleting catalog objects in the back
office: the API resources' own handlers run, so their messages show by the fields (input
kept) and their refusals (an ordered product) are the sentence of the confirm page."""

from __future__ import annotations

from sqlalchemy import select

from admit.models import Discount, Item, ItemAddOn, ItemBundle, ItemVariation
from tests.control.conftest import E, _post
from tests.control.test_catalog_edit import _count, _token
from tests.control.test_pages import _as


async def _product(api, shop, name: str, **more) -> dict:
    body = {"name": {"en": name}, "default_price": "5.00", **more}
    return await _post(api, shop.token, f"{E}/items/", body)


async def test_addons_added_refused_edited_deleted(web, api, people, factory, shop):
    plain = await _post(api, shop.token, f"{E}/categories/", {"name": {"en": "Plain"}})
    drinks = await _post(api, shop.token, f"{E}/categories/",
                         {"name": {"en": "Drinks"}, "is_addon": True})  # fmt: skip
    await _as(web, people["boss"])
    url = f"{shop.base}products/{shop.item}/"
    token = await _token(web, url)
    page = await web.get(url)
    assert "Add-ons" in page.text and "Bundles" in page.text and ">Drinks<" in page.text
    bad = await web.post(url + "addons/new", data={
        "csrf_token": token, "addon_category": str(plain["id"]), "min_count": "2",
        "max_count": "1", "position": "0"})  # fmt: skip
    assert bad.status_code == 400
    assert 'id="addons-new-addon_category-error"' in bad.text and "add-on category" in bad.text
    assert 'id="addons-new-min_count" name="min_count" required value="2"' in bad.text
    assert await _count(factory, ItemAddOn) == 0
    good = await web.post(url + "addons/new", data={
        "csrf_token": token, "addon_category": str(drinks["id"]), "min_count": "0",
        "max_count": "2", "position": "0", "price_included": "1"})  # fmt: skip
    assert good.status_code == 303, good.text[good.text.find("<main") :][:2000]
    async with factory.sessionmaker() as session:
        addon = (await session.scalars(select(ItemAddOn))).one()
        assert addon.max_count == 2 and addon.price_included and not addon.multi_allowed
    page = await web.get(url)
    assert "<h3>Drinks</h3>" in page.text
    changed = await web.post(f"{url}addons/{addon.id}/", data={
        "csrf_token": token, "addon_category": str(drinks["id"]), "min_count": "1",
        "max_count": "ZZZ", "position": "0"})  # fmt: skip
    assert changed.status_code == 400 and f'id="addons-{addon.id}-max_count-error"' in changed.text
    assert 'value="ZZZ"' in changed.text
    gone = await web.post(f"{url}addons/{addon.id}/delete", data={"csrf_token": token})
    assert gone.status_code == 303 and await _count(factory, ItemAddOn) == 0


async def test_bundles_refused_for_the_product_itself_and_added(web, api, people, factory, shop):
    sized = await _product(api, shop, "Shirt", variations=[{"value": {"en": "S"}}])
    await _as(web, people["boss"])
    url = f"{shop.base}products/{shop.item}/"
    token = await _token(web, url)
    itself = await web.post(url + "bundles/new", data={
        "csrf_token": token, "bundled_item": str(shop.item), "count": "1",
        "designated_price": "0.00"})  # fmt: skip
    assert itself.status_code == 400 and "must not be the same item" in itself.text
    no_variation = await web.post(url + "bundles/new", data={
        "csrf_token": token, "bundled_item": str(sized["id"]), "count": "2",
        "designated_price": "3.00"})  # fmt: skip
    assert no_variation.status_code == 400
    assert 'id="bundles-new-bundled_variation-error"' in no_variation.text
    variation = sized["variations"][0]["id"]
    good = await web.post(url + "bundles/new", data={
        "csrf_token": token, "bundled_item": str(sized["id"]), "bundled_variation": str(variation),
        "count": "2", "designated_price": "3.00"})  # fmt: skip
    assert good.status_code == 303, good.text[good.text.find("<main") :][:2000]
    async with factory.sessionmaker() as session:
        bundle = (await session.scalars(select(ItemBundle))).one()
        assert (bundle.bundled_variation_id, bundle.count) == (variation, 2)
        assert str(bundle.designated_price) == "3.00"


async def test_discount_created_with_messages_edited_deleted(web, people, factory, shop):
    await _as(web, people["boss"])
    base = shop.base + "discounts/"
    listing = await web.get(base)
    assert listing.status_code == 200 and 'href="/control/event/acme/summit/discounts/new"' in (
        listing.text
    )
    token = await _token(web, base + "new")
    form = {"csrf_token": token, "internal_name": "Group", "active": "1", "position": "0",
            "condition_all_products": "1", "condition_min_count": "3",
            "condition_min_value": "0", "benefit_discount_matching_percent": "150",
            "benefit_same_products": "1"}  # fmt: skip
    bad = await web.post(base + "new", data=form)
    assert bad.status_code == 400
    assert (
        'id="f-benefit_discount_matching_percent-error"' in bad.text and 'value="150"' in bad.text
    )
    assert await _count(factory, Discount) == 0
    good = await web.post(base + "new", data={**form, "benefit_discount_matching_percent": "10"})
    assert good.status_code == 303, good.text[good.text.find("<main") :][:2000]
    async with factory.sessionmaker() as session:
        discount = (await session.scalars(select(Discount))).one()
        assert (
            discount.condition_min_count == 3
            and str(discount.benefit_discount_matching_percent) == "10.00"
        )
    url = good.headers["location"]
    assert url == f"{base}{discount.id}/"
    page = await web.get(url)
    assert "Discount: Group" in page.text and f'href="{url}delete"' in page.text
    saved = await web.post(url, data={**form, "benefit_discount_matching_percent": "5",
                                      "condition_min_count": "4"})  # fmt: skip
    assert saved.status_code == 303
    assert "Group" in (await web.get(base)).text
    confirm = await web.get(url + "delete")
    assert confirm.status_code == 200 and 'name="csrf_token"' in confirm.text
    gone = await web.post(url + "delete", data={"csrf_token": token})
    assert gone.status_code == 303 and gone.headers["location"] == base
    assert await _count(factory, Discount) == 0


async def test_deleting_an_ordered_product_is_refused_with_a_sentence(
    web, api, people, factory, shop
):
    spare = await _product(api, shop, "Spare", variations=[{"value": {"en": "A"}}])
    await _as(web, people["boss"])
    token = await _token(web, f"{shop.base}products/{shop.item}/delete")
    refused = await web.post(f"{shop.base}products/{shop.item}/delete", data={"csrf_token": token})
    assert refused.status_code == 409
    assert 'id="delete-refused"' in refused.text and "already been ordered" in refused.text
    assert await _count(factory, Item, Item.id == shop.item) == 1
    url = f"{shop.base}products/{spare['id']}/"
    only = spare["variations"][0]["id"]
    last = await web.post(f"{url}variations/{only}/delete", data={"csrf_token": token})
    assert last.status_code == 400 and "only variation" in last.text
    assert await _count(factory, ItemVariation, ItemVariation.id == only) == 1
    done = await web.post(url + "delete", data={"csrf_token": token})
    assert done.status_code == 303 and done.headers["location"] == shop.base + "products/"
    assert await _count(factory, Item, Item.id == spare["id"]) == 0
    missing = await web.post(url + "delete", data={"csrf_token": token})
    assert missing.status_code == 404


async def test_catalog_objects_deleted_after_confirm(web, api, people, factory, shop):
    made = {
        "categories": await _post(api, shop.token, f"{E}/categories/", {"name": {"en": "C"}}),
        "taxrules": await _post(api, shop.token, f"{E}/taxrules/",
                                {"name": {"en": "VAT"}, "rate": "19.00"}),
        "questions": await _post(api, shop.token, f"{E}/questions/",
                                 {"question": {"en": "Q?"}, "type": "S", "identifier": "Q"}),
        "vouchers": await _post(api, shop.token, f"{E}/vouchers/", {"code": "GONE1"}),
        "quotas": {"id": shop.quota},
    }  # fmt: skip
    await _as(web, people["boss"])
    token = await _token(web, shop.base + "products/")
    for area, obj in made.items():
        url = f"{shop.base}{area}/{obj['id']}/delete"
        assert (await web.get(url)).status_code == 200, area
        done = await web.post(url, data={"csrf_token": token})
        assert done.status_code == 303, (area, done.text[done.text.find("<main") :][:1000])
        assert (await web.get(f"{shop.base}{area}/{obj['id']}/")).status_code == 404, area


async def test_voucher_csv_from_the_list_keeps_its_tag_filter(web, api, people, factory, shop,
                                                               background):  # fmt: skip
    from tests.control.test_organizer_pages import _finished

    for code, tag in (("SPRING1", "spring"), ("SPRING2", "spring"), ("FALL1", "fall")):
        await _post(api, shop.token, f"{E}/vouchers/",
                    {"code": code, "tag": tag, "max_usages": 2, "item": shop.item})  # fmt: skip
    await _as(web, people["boss"])
    listing = await web.get(shop.base + "vouchers/?tag=spring")
    assert 'id="voucher-csv"' in listing.text
    assert '<input type="hidden" name="tag" value="spring">' in listing.text
    token = await _token(web, shop.base + "vouchers/")
    started = await web.post(
        shop.base + "exports/voucherlist/run",
        data={"csrf_token": token, "_format": "csv", "tag": "spring"},
    )
    assert started.status_code == 303, started.text[:1000]
    progress = started.headers["location"]
    status = await _finished(web, progress, background)
    assert status["status"] == "finished", status
    file = (await web.get(progress + "download")).content.decode("utf-8-sig")
    lines = file.splitlines()
    assert lines[0].startswith("Voucher code,") and "Redeemed" in lines[0] and "Tag" in lines[0]
    assert sorted(line.split(",")[0] for line in lines[1:]) == ["SPRING1", "SPRING2"]
    assert all(",Ticket," in line and ",spring," in line for line in lines[1:])
    everything = await web.get(shop.base + "vouchers/")
    assert (
        'name="tag" value=' not in everything.text.split('id="voucher-csv"')[1].split("</form>")[0]
    )
