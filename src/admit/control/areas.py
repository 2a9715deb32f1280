"""The catalog's edit pages: products (with variations), categories, quotas (with live
availability), questions (with options), tax rules, check-in lists and vouchers, each an
:class:`~admit.control.editing.Area` over the API resource of the same name."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from sqlalchemy import select

import admit.catalog.discounts.routes
import admit.catalog.items.routes
import admit.catalog.questions.routes
import admit.catalog.taxes.routes
import admit.checkin.routes
import admit.quotas.routes
import admit.vouchers.routes
from admit.control.deleting import mount_delete
from admit.control.editing import Area, Child, fixed, mount, resource
from admit.control.fields import Field
from admit.control.render import money, text_of
from admit.kit.http.context import EventContext
from admit.models import Item, ItemCategory, ItemVariation, Quota, TaxRule
from admit.quotas import service as quota_service

router = APIRouter(include_in_schema=False)


async def _choices(ctx: EventContext, model: Any, label: Any) -> list[tuple[str, str]]:
    rows = await ctx.session.execute(
        select(model.id, label).where(model.event_id == ctx.event.id).order_by(model.id)
    )
    return [(str(i), text_of(n)) for i, n in rows]


async def products(ctx: EventContext) -> list[tuple[str, str]]:
    return await _choices(ctx, Item, Item.name)


async def variations(ctx: EventContext) -> list[tuple[str, str]]:
    rows = await ctx.session.execute(
        select(ItemVariation.id, Item.name, ItemVariation.value)
        .join(Item, Item.id == ItemVariation.item_id)
        .where(Item.event_id == ctx.event.id)
        .order_by(Item.id, ItemVariation.id)
    )
    return [(str(i), f"{text_of(n)} – {text_of(v)}") for i, n, v in rows]


def _yes(value: Any) -> str:
    return "yes" if value else "no"


# -- products -----------------------------------------------------------------------------


async def product_fields(ctx: EventContext) -> list[Field]:
    return [
        Field("name", "Name", "i18n", required=True),
        Field("default_price", "Price", "decimal", required=True,
              help=f"In {ctx.event.currency}, e.g. 25.00."),
        Field("category", "Category", "select",
              choices=await _choices(ctx, ItemCategory, ItemCategory.name)),
        Field("tax_rule", "Tax rule", "select", choices=await _choices(ctx, TaxRule, TaxRule.name)),
        Field("description", "Description", "i18n"),
        Field("admission", "Admits to the event (a ticket)", "bool"),
        Field("active", "On sale", "bool", default=True),
    ]  # fmt: skip


VARIATION_FIELDS = [
    Field("value", "Name", "i18n", required=True),
    Field("default_price", "Price", "decimal", help="Empty: the product's price."),
    Field("active", "On sale", "bool", default=True),
]


async def addon_fields(ctx: EventContext) -> list[Field]:
    rows = await ctx.session.execute(
        select(ItemCategory.id, ItemCategory.name)
        .where(ItemCategory.event_id == ctx.event.id, ItemCategory.is_addon.is_(True))
        .order_by(ItemCategory.id)
    )
    return [
        Field("addon_category", "Add-on category", "select", required=True,
              choices=[(str(i), text_of(n)) for i, n in rows],
              help="Its products are offered with this one (categories marked as add-ons)."),
        Field("min_count", "At least", "number", required=True, default="0"),
        Field("max_count", "At most", "number", required=True, default="1"),
        Field("position", "Position", "number", required=True, default="0"),
        Field("multi_allowed", "The same add-on may be chosen more than once", "bool"),
        Field("price_included", "Included in this product's price", "bool"),
    ]  # fmt: skip


async def bundle_fields(ctx: EventContext) -> list[Field]:
    return [
        Field("bundled_item", "Bundled product", "select", required=True,
              choices=await products(ctx)),
        Field("bundled_variation", "Its variation", "select", choices=await variations(ctx),
              help="Needed when the bundled product has variations."),
        Field("count", "How many", "number", required=True, default="1"),
        Field("designated_price", "Designated price", "decimal", required=True, default="0.00",
              help=f"In {ctx.event.currency}: the part of this product's price it stands for."),
    ]  # fmt: skip


def _bundle_label(r: dict[str, Any]) -> str:
    return f"{r.get('count')} × product #{r.get('bundled_item')}"


PRODUCTS = Area(
    "products", "Products", "product", resource("items"), product_fields, [],
    children=[Child("variations", "Variations", resource("item-variations"), VARIATION_FIELDS,
                    lambda r: text_of(r.get("value"))),
              Child("addons", "Add-ons", resource("item-addons"), addon_fields,
                    lambda r: f"Category #{r.get('addon_category')}",
                    label_field="addon_category"),
              Child("bundles", "Bundles", resource("item-bundles"), bundle_fields,
                    _bundle_label, label_field="bundled_item")],
    list_page=False,
    history_key="item",
    create_only=[Field("variations", "Variations", "lines",
                       help="One a line, with its price if it differs: Balcony = 120.00")],
)  # fmt: skip


# -- quotas -------------------------------------------------------------------------------


async def quota_fields(ctx: EventContext) -> list[Field]:
    return [
        Field("name", "Name", required=True),
        Field("size", "Size", "number", help="Empty: unlimited."),
        Field("items", "Products", "multi", choices=await products(ctx)),
        Field("variations", "Variations", "multi", choices=await variations(ctx)),
        Field("closed", "Closed (sells nothing more)", "bool"),
    ]


async def quota_extra(ctx: EventContext, obj: dict[str, Any]) -> dict[str, Any]:
    """The quota's availability counted now, as the API's ``availability/`` counts it."""
    if not obj.get("id"):
        return {}
    quota = await ctx.session.get(Quota, obj["id"])
    numbers = (await quota_service.availability(ctx.session, [quota]))[quota.id].as_dict()
    return {"availability": numbers}


QUOTAS = Area("quotas", "Quotas", "quota", resource("quotas"), quota_fields, [],
              list_page=False, extra=quota_extra, history_key="quota")  # fmt: skip


# -- categories, tax rules, questions, check-in lists --------------------------------------

CATEGORIES = Area(
    "categories", "Categories", "category", resource("categories"),
    fixed([Field("name", "Name", "i18n", required=True),
           Field("description", "Description", "i18n"),
           Field("is_addon", "Add-on category (only sold with another product)", "bool")]),
    [("Name", lambda r: text_of(r["name"])), ("Add-ons", lambda r: _yes(r["is_addon"]))],
    audit_type="category",
)  # fmt: skip

TAX_RULES = Area(
    "taxrules", "Tax rules", "tax rule", resource("taxrules"),
    fixed([Field("name", "Name", "i18n", required=True),
           Field("rate", "Rate (%)", "decimal", required=True),
           Field("price_includes_tax", "Prices include the tax", "bool", default=True),
           Field("default", "Default for new products", "bool")]),
    [("Name", lambda r: text_of(r["name"])), ("Rate", lambda r: f"{r['rate']} %"),
     ("Included", lambda r: _yes(r["price_includes_tax"]))],
    audit_type="taxrule",
)  # fmt: skip

QUESTION_TYPES = [("S", "Text (one line)"), ("T", "Text (several lines)"), ("N", "Number"),
                  ("B", "Yes / no"), ("C", "One choice"), ("M", "Several choices"),
                  ("D", "Date"), ("H", "Time"), ("W", "Date and time"), ("TEL", "Phone number"),
                  ("CC", "Country"), ("F", "File")]  # fmt: skip


async def question_fields(ctx: EventContext) -> list[Field]:
    return [
        Field("question", "Question", "i18n", required=True),
        Field("type", "Answer type", "select", required=True, choices=QUESTION_TYPES),
        Field("identifier", "Identifier", required=True, help="Letters, digits, dots, dashes."),
        Field("required", "An answer is required", "bool"),
        Field("items", "Asked for", "multi", choices=await products(ctx)),
    ]


OPTION_FIELDS = [
    Field("answer", "Answer", "i18n", required=True),
    Field("identifier", "Identifier", required=True),
]

QUESTIONS = Area(
    "questions", "Questions", "question", resource("questions"), question_fields,
    [("Question", lambda r: text_of(r["question"])), ("Type", lambda r: r["type"]),
     ("Required", lambda r: _yes(r["required"]))],
    children=[Child("options", "Options", resource("question-options"), OPTION_FIELDS,
                    lambda r: text_of(r.get("answer")))],
    audit_type="question",
)  # fmt: skip


async def checkin_fields(ctx: EventContext) -> list[Field]:
    return [
        Field("name", "Name", required=True),
        Field("all_products", "Every product", "bool", default=True),
        Field("limit_products", "Or only these", "multi", choices=await products(ctx)),
        Field("include_pending", "Unpaid tickets may enter too", "bool"),
        Field("allow_multiple_entries", "A ticket may enter more than once", "bool"),
    ]


CHECKIN_LISTS = Area(
    "checkinlists", "Check-in lists", "check-in list", resource("checkinlists"), checkin_fields,
    [("Name", lambda r: r["name"]),
     ("Products", lambda r: "all" if r["all_products"] else f"{len(r['limit_products'])} chosen"),
     ("Unpaid may enter", lambda r: _yes(r["include_pending"]))],
    menu="checkin", audit_type="checkinlist",
)  # fmt: skip


# -- discounts ------------------------------------------------------------------------------


async def discount_fields(ctx: EventContext) -> list[Field]:
    return [
        Field("internal_name", "Name", required=True, optional_null=False),
        Field("active", "Active", "bool", default=True),
        Field("position", "Position", "number", required=True, default="0",
              help="Discounts apply in this order, lowest first."),
        Field("available_from", "Available from", "datetime"),
        Field("available_until", "Available until", "datetime"),
        Field("condition_all_products", "Counts every product", "bool", default=True),
        Field("condition_limit_products", "Or counts only these", "multi",
              choices=await products(ctx)),
        Field("condition_min_count", "When at least this many are bought", "number",
              required=True, default="0"),
        Field("condition_min_value", "Or when they cost at least", "decimal", required=True,
              default="0.00", help=f"In {ctx.event.currency}."),
        Field("benefit_discount_matching_percent", "Discount (%)", "decimal", required=True,
              default="0.00"),
        Field("benefit_only_apply_to_cheapest_n_matches", "Only on the cheapest", "number",
              help="Empty: on every matching product."),
        Field("benefit_same_products", "Discounts the counted products", "bool", default=True),
        Field("benefit_limit_products", "Or discounts these", "multi", choices=await products(ctx)),
        Field("condition_apply_to_addons", "Add-ons count", "bool", default=True),
        Field("benefit_apply_to_addons", "Add-ons are discounted", "bool", default=True),
    ]  # fmt: skip


DISCOUNTS = Area(
    "discounts", "Discounts", "discount", resource("discounts"), discount_fields,
    [("Name", lambda r: r["internal_name"] or f"#{r['id']}"),
     ("Discount", lambda r: f"{r['benefit_discount_matching_percent']} %"),
     ("From", lambda r: f"{r['condition_min_count']} products"
      if r["condition_min_count"] else money(r["condition_min_value"])),
     ("Active", lambda r: _yes(r["active"]))],
    audit_type="discount",
)  # fmt: skip


# -- vouchers -------------------------------------------------------------------------------


async def voucher_fields(ctx: EventContext) -> list[Field]:
    return [
        Field("code", "Code", help="Empty: one is generated."),
        Field("max_usages", "Times it may be used", "number", required=True, default="1"),
        Field("valid_until", "Valid until", "datetime"),
        Field("item", "Product", "select", choices=await products(ctx)),
        Field("quota", "Or any product of the quota", "select",
              choices=await _choices(ctx, Quota, Quota.name)),
        Field("price_mode", "Price", "select", required=True, default="none",
              choices=[("none", "unchanged"), ("set", "set to the value"),
                       ("subtract", "reduced by the value"), ("percent", "reduced by percent")]),
        Field("value", "Value", "decimal"),
        Field("tag", "Tag", help="Groups vouchers, e.g. a campaign.", optional_null=False),
        Field("comment", "Comment", "textarea", optional_null=False),
        Field("block_quota", "Reserves a place in the quota", "bool"),
        Field("allow_ignore_quota", "May be used when sold out", "bool"),
    ]  # fmt: skip


def _usage(r: dict[str, Any]) -> str:
    return f"{r.get('redeemed', 0)} of {r.get('max_usages')}"


VOUCHERS = Area(
    "vouchers", "Vouchers", "voucher", resource("vouchers"), voucher_fields,
    [("Code", lambda r: r["code"]), ("Used", _usage), ("Tag", lambda r: r["tag"] or "—"),
     ("Price", lambda r: r["price_mode"] if r["price_mode"] == "none"
      else f"{r['price_mode']} {money(r['value'])}"),
     ("Valid until", lambda r: (r["valid_until"] or "—")[:16].replace("T", " "))],
    creator=admit.vouchers.routes.create,
    history_key="voucher",
)  # fmt: skip

AREAS = (PRODUCTS, QUOTAS, CATEGORIES, TAX_RULES, QUESTIONS, CHECKIN_LISTS, VOUCHERS, DISCOUNTS)
for _area in AREAS:
    mount(router, _area)
    if _area.deletable:
        mount_delete(router, _area)
