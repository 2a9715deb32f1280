"""Item rules: references into the event, cross-field rules, the default tax rule, and the
inline variations, add-ons and bundles accepted on creation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, Decimal
from typing import Any

from sqlalchemy import ColumnElement, exists, false, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.items.item_parity import (
    apply_parity,
    membership_types,
    parity_errors,
    parity_to_read,
)
from admit.catalog.items.item_schemas import ItemIn
from admit.catalog.items.nested_service import (
    BundleRefs,
    addon_errors,
    addon_to_read,
    apply_addon,
    apply_bundle,
    apply_variation,
    bundle_errors,
    bundle_to_read,
    load_bundle_refs,
    load_categories,
    variation_errors,
    variation_to_read,
)
from admit.catalog.items.service import (
    Errors,
    apply_channels,
    channels_out,
    in_range,
    invalid_pk,
    load_by_id,
    meta_errors,
    meta_out,
    raise_if,
    window_error,
    writes_meta,
)
from admit.kit.http.errors import NON_FIELD
from admit.kit.resources.i18n_search import i18n_contains
from admit.models import (
    Event,
    Item,
    ItemAddOn,
    ItemBundle,
    ItemCategory,
    ItemVariation,
    MembershipType,
    OrderPosition,
    TaxRule,
)

ZERO = Decimal("0.00")
RATE_LIMIT = Decimal(10) ** 8  # what the rate column (NUMERIC(10, 2)) holds

# Columns copied as they are between ItemIn and Item.
_PLAIN = (
    "name default_price active description free_price free_price_suggestion original_price "
    "admission position available_from available_until require_voucher hide_without_voucher "
    "allow_cancel min_per_order max_per_order checkin_attention checkin_text require_approval "
    "require_bundling generate_tickets allow_waitinglist show_quota_left issue_giftcard"
).split()


async def tax_rates(session: AsyncSession, event_id: int) -> dict[int, Decimal]:
    """Every tax rule's rate in the event: one query, whatever number of items is rendered."""
    rows = await session.execute(
        select(TaxRule.id, TaxRule.rate).where(TaxRule.event_id == event_id)
    )
    return {rule_id: rate for rule_id, rate in rows}


def item_to_read(
    item: Item, declared: Mapping[str, str] | None, rates: Mapping[int, Decimal]
) -> dict[str, Any]:
    data = {c: getattr(item, c) for c in _PLAIN}
    rate = rates.get(item.tax_rule_id) if item.tax_rule_id is not None else None
    data.update(
        id=item.id,
        internal_name=item.internal_name or None,  # null when unset, as the reference
        category=item.category_id,
        tax_rule=item.tax_rule_id,
        tax_rate=rate if rate is not None else ZERO,
        personalized=item.personalized,
        picture=item.picture,
        all_sales_channels=item.all_sales_channels,
        limit_sales_channels=list(item.limit_sales_channels or []),
        sales_channels=channels_out(item),
        meta_data=meta_out(declared, item.meta_data),
        has_variations=bool(item.variations),
        variations=[variation_to_read(v, item, declared) for v in item.variations],
        addons=[addon_to_read(a) for a in item.addons],
        bundles=[bundle_to_read(b) for b in item.bundles],
    )
    data.update(parity_to_read(item))
    return data


# -- list filters -----------------------------------------------------------------------------


def parse_tax_rate(raw: str) -> Decimal | None:
    """``0``, ``0.00`` and ``None`` mean "no tax": no rule or a rule with rate 0."""
    text = raw.strip()
    if text in ("0", "0.00", "None"):
        return None
    try:
        value = Decimal(text)
    except ArithmeticError:
        raise ValueError("Enter a number.") from None
    if not value.is_finite():
        raise ValueError("Enter a number.")
    return value


def tax_rate_clause(rate: Decimal | None) -> ColumnElement[bool]:
    if rate is None or rate == 0:
        zero = select(TaxRule.id).where(TaxRule.rate == 0)
        return or_(Item.tax_rule_id.is_(None), Item.tax_rule_id.in_(zero))
    if abs(rate) >= RATE_LIMIT or rate != rate.quantize(ZERO, rounding=ROUND_DOWN):
        # No stored rate (two places, below 10^8) can equal it; never cast it to NUMERIC.
        return false()
    return Item.tax_rule_id.in_(select(TaxRule.id).where(TaxRule.rate == rate))


def category_clause(category_id: int) -> ColumnElement[bool]:
    """An id no INTEGER column can hold matches nothing (and never reaches PostgreSQL)."""
    if not in_range([category_id]):
        return false()
    return Item.category_id == category_id


def search_clause(term: str) -> ColumnElement[bool]:
    """Case-insensitive, in the internal name or any translation of the name."""
    low = term.lower()
    return or_(
        func.lower(Item.internal_name).contains(low, autoescape=True),
        i18n_contains(Item.name, low),
    )


# -- validation -------------------------------------------------------------------------------


@dataclass
class ItemRefs:
    """References resolved while validating, used when writing."""

    tax_rule_id: int | None
    bundle_refs: BundleRefs | None = None
    membership_types: list[MembershipType] = field(default_factory=list)


async def _rule(session: AsyncSession, event_id: int, rule_id: int) -> TaxRule | None:
    if not in_range([rule_id]):
        return None
    query = select(TaxRule).where(TaxRule.id == rule_id, TaxRule.event_id == event_id)
    return (await session.execute(query)).scalar_one_or_none()


async def _default_rule(session: AsyncSession, event_id: int) -> TaxRule | None:
    query = (
        select(TaxRule)
        .where(TaxRule.event_id == event_id, TaxRule.default.is_(True))
        .order_by(TaxRule.id)
        .limit(1)
    )
    return (await session.execute(query)).scalar_one_or_none()


async def validate_item(
    session: AsyncSession,
    event: Event,
    data: ItemIn,
    creating: bool,
    supplied: set[str],
    item: Item | None = None,
) -> ItemRefs:
    errors: Errors = await parity_errors(session, event, data, item, data.issue_giftcard)
    general: list[str] = []
    declared = event.item_meta_properties or {}

    if data.category is not None:
        found = await load_by_id(
            session, ItemCategory, [data.category], ItemCategory.event_id == event.id
        )
        if not found:
            errors["category"] = [invalid_pk(data.category)]

    rule: TaxRule | None = None
    if data.tax_rule is not None:
        rule = await _rule(session, event.id, data.tax_rule)
        if rule is None:
            errors["tax_rule"] = [invalid_pk(data.tax_rule)]
    elif creating:
        default = await _default_rule(session, event.id)
        # A gift card carries no sales tax: the default rule is skipped when it has a rate.
        if default is not None and not (data.issue_giftcard and default.rate > 0):
            rule = default

    unknown = meta_errors(data.meta_data, declared)
    if unknown:
        errors["meta_data"] = unknown
    if (
        data.min_per_order is not None
        and data.max_per_order is not None
        and data.min_per_order > data.max_per_order
    ):
        general.append(
            "The maximum number per order can not be lower than the minimum number per order."
        )
    window = window_error(data.available_from, data.available_until)
    if window:
        general.append(window)
    if "personalized" in supplied and data.personalized and not data.admission:
        general.append("Only admission products can currently be personalized.")
    if data.issue_giftcard:
        if rule is not None and rule.rate > 0:
            general.append(
                "Gift card products should not be associated with non-zero tax rates since "
                "sales tax will be applied when the gift card is redeemed."
            )
        if data.admission:
            general.append("Gift card products should not be admission products at the same time.")
    if general:
        errors[NON_FIELD] = [*general, *errors.get(NON_FIELD, [])]

    refs = ItemRefs(tax_rule_id=rule.id if rule is not None else None)
    refs.membership_types = await membership_types(session, data)
    if creating:
        nested = await _nested_errors(session, event.id, data, declared, refs)
        errors.update(nested)
    raise_if(errors)
    return refs


async def _nested_errors(
    session: AsyncSession,
    event_id: int,
    data: ItemIn,
    declared: Mapping[str, str],
    refs: ItemRefs,
) -> Errors:
    """Errors of the inline lists, each a list with one (maybe empty) dict per element."""
    errors: Errors = {}
    found = [variation_errors(v, declared) for v in data.variations]
    if any(found):
        errors["variations"] = found
    categories = await load_categories(session, event_id, data.addons)
    taken: set[int] = set()
    found = []
    for addon in data.addons:
        found.append(addon_errors(addon, categories, taken))
        taken.add(addon.addon_category)
    if any(found):
        errors["addons"] = found
    refs.bundle_refs = await load_bundle_refs(session, event_id, data.bundles)
    found = [bundle_errors(b, refs.bundle_refs, None) for b in data.bundles]
    if any(found):
        errors["bundles"] = found
    return errors


# -- deleting ---------------------------------------------------------------------------------

ITEM_ORDERED = (
    "This product cannot be deleted because it has already been ordered. Deactivate it "
    "(set active to false) to stop selling it."
)
VARIATION_ORDERED = (
    "This variation cannot be deleted because it has already been ordered. Deactivate it "
    "(set active to false) to stop selling it."
)


async def ordered(session: AsyncSession, *, item_id: int, variation_id: int | None = None) -> bool:
    """Whether an order position (of any status, canceled included) names the item or the
    variation: orders keep what was sold, so it can be deactivated but never deleted. This is
    a permanent refusal (403), not a conflict a retry could resolve."""
    clause = (
        OrderPosition.item_id == item_id
        if variation_id is None
        else OrderPosition.variation_id == variation_id
    )
    return bool(await session.scalar(select(exists().where(clause))))


# -- writing ----------------------------------------------------------------------------------


def apply_item(
    item: Item, data: ItemIn, refs: ItemRefs, supplied: set[str], creating: bool
) -> None:
    for key in _PLAIN:
        setattr(item, key, getattr(data, key))
    item.internal_name = data.internal_name or ""
    item.category_id = data.category
    item.tax_rule_id = refs.tax_rule_id
    # Only admission products are personalized; an admission product is personalized unless
    # told otherwise (the reference's backwards-compatible default).
    if not data.admission:
        item.personalized = False
    elif "personalized" in supplied or not creating:
        item.personalized = data.personalized
    else:
        item.personalized = True
    apply_channels(item, data, supplied)
    apply_parity(item, data, refs.membership_types)
    if writes_meta(supplied, creating):
        item.meta_data = dict(data.meta_data)
    if creating:
        _create_nested(item, data)


def _create_nested(item: Item, data: ItemIn) -> None:
    item.variations = []
    item.addons = []
    item.bundles = []
    for var_data in data.variations:
        variation = ItemVariation()
        apply_variation(variation, var_data, set(var_data.model_fields_set), creating=True)
        item.variations.append(variation)
    for addon_data in data.addons:
        addon = ItemAddOn()
        apply_addon(addon, addon_data)
        item.addons.append(addon)
    for bundle_data in data.bundles:
        bundle = ItemBundle()
        apply_bundle(bundle, bundle_data)
        item.bundles.append(bundle)
