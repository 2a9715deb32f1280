"""Copying an event's configuration into a new event, with every internal reference remapped.

Copied: tax rules, categories (with cross-selling products), items with variations, add-ons and
bundles, questions with options and dependencies, discounts, the settings (``E/settings/``) and
the event-level configuration (plugins, time zone, meta data, sales channels, item meta
properties). Not copied: subevents, orders and everything that hangs off orders. Nothing in
the copy points back into the source: each id is translated through a map built while
copying, and a reference whose target was not copied is an error rather than a silent link
to the source.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from admit.events import item_links
from admit.events import settings as event_settings
from admit.models import (
    Discount,
    Event,
    Item,
    ItemCategory,
    ItemVariation,
    Question,
    TaxRule,
    category_cross_selling_items,
    discount_benefit_items,
    discount_condition_items,
    question_items,
)

M = TypeVar("M")

# Event fields taken from the source unless the request body sets them.
INHERITED_FIELDS = (
    "is_public",
    "testmode",
    "has_subevents",
    "plugins",
    "meta_data",
    "timezone",
    "item_meta_properties",
    "all_sales_channels",
    "limit_sales_channels",
)


async def _clone_settings(session: AsyncSession, source: Event, target: Event) -> None:
    """Every setting (``E/settings/``) as the source has it; the time zone is an event field
    (copied above unless the body names one)."""
    target.settings = dict(source.settings or {})
    for setting in event_settings.EVENT_SETTINGS:
        if setting.binding is not None and setting.key not in INHERITED_FIELDS:
            copied = await setting.binding.load(session, source)
            await setting.binding.store(session, target, copied)


def _columns(obj: Any, skip: Iterable[str] = ()) -> dict[str, Any]:
    skipped = {"id", *skip}
    return {c.key: getattr(obj, c.key) for c in obj.__table__.columns if c.key not in skipped}


def _copy(obj: M, **overrides: Any) -> M:
    return type(obj)(**{**_columns(obj), **overrides})


class IdMap(dict[int, int]):
    """Source id -> copy id for one kind of object; unknown ids fail loudly."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def get_required(self, source_id: int | None) -> int | None:
        if source_id is None:
            return None
        try:
            return self[source_id]
        except KeyError:
            raise LookupError(f"{self.kind} {source_id} was not copied") from None


@dataclass
class CloneMaps:
    """What was copied so far, for copiers registered by later packages (e.g. quotas)."""

    tax_rules: IdMap
    categories: IdMap
    items: IdMap
    variations: IdMap


Copier = Callable[[AsyncSession, Event, Event, CloneMaps], Awaitable[None]]
# Packages whose data belongs in a clone (quotas, ...) register a copier here.
extra_copiers: list[Copier] = []


async def clone_event_data(session: AsyncSession, source: Event, target: Event) -> None:
    """Copies the catalog and the settings of ``source`` into the flushed ``target``."""
    await _clone_settings(session, source, target)
    tax_rules = IdMap("tax rule")
    for rule in await _all(session, TaxRule, source.id):
        copy = _copy(rule, event_id=target.id)
        session.add(copy)
        await session.flush()
        tax_rules[rule.id] = copy.id

    categories = IdMap("category")
    source_categories = await _all(session, ItemCategory, source.id)
    for category in source_categories:
        copy = _copy(category, event_id=target.id)
        session.add(copy)
        await session.flush()
        categories[category.id] = copy.id

    items = IdMap("item")
    variations = IdMap("variation")
    source_items = (
        (
            await session.execute(
                select(Item)
                .where(Item.event_id == source.id)
                .options(
                    selectinload(Item.variations),
                    selectinload(Item.addons),
                    selectinload(Item.bundles),
                    selectinload(Item.require_membership_types),
                )
                .order_by(Item.id)
            )
        )
        .scalars()
        .all()
    )
    same_organizer = source.organizer_id == target.organizer_id
    for item in source_items:
        copy = _copy(
            item,
            event_id=target.id,
            category_id=categories.get_required(item.category_id),
            tax_rule_id=tax_rules.get_required(item.tax_rule_id),
            # Set once every item and quota exists (item_links); membership types belong to
            # the organizer, so they only carry over within it.
            hidden_if_item_available_id=None,
            hidden_if_available_id=None,
            grant_membership_type_id=item.grant_membership_type_id if same_organizer else None,
        )
        session.add(copy)
        await session.flush()
        items[item.id] = copy.id
        for variation in item.variations:
            vcopy = ItemVariation(**{**_columns(variation), "item_id": copy.id})
            session.add(vcopy)
            await session.flush()
            variations[variation.id] = vcopy.id
    for item in source_items:
        for addon in item.addons:
            session.add(
                _copy(
                    addon,
                    base_item_id=items[item.id],
                    addon_category_id=categories.get_required(addon.addon_category_id),
                )
            )
        for bundle in item.bundles:
            session.add(
                _copy(
                    bundle,
                    base_item_id=items[item.id],
                    bundled_item_id=items.get_required(bundle.bundled_item_id),
                    bundled_variation_id=variations.get_required(bundle.bundled_variation_id),
                )
            )
    await _copy_links(
        session,
        category_cross_selling_items,
        "category_id",
        categories,
        items,
    )
    await _copy_questions(session, source, target, items)
    await _copy_discounts(session, source, target, items)
    maps = CloneMaps(tax_rules, categories, items, variations)
    for copier in extra_copiers:
        await copier(session, source, target, maps)
    await session.flush()
    await item_links.copy_item_links(session, source, target, source_items, items)


async def _copy_questions(
    session: AsyncSession, source: Event, target: Event, items: IdMap
) -> None:
    questions = IdMap("question")
    source_questions = (
        (
            await session.execute(
                select(Question)
                .where(Question.event_id == source.id)
                .options(selectinload(Question.options))
                .order_by(Question.id)
            )
        )
        .scalars()
        .all()
    )
    for question in source_questions:
        copy = _copy(question, event_id=target.id, dependency_question_id=None)
        session.add(copy)
        await session.flush()
        questions[question.id] = copy.id
        for option in question.options:
            session.add(_copy(option, question_id=copy.id))
    for question in source_questions:
        if question.dependency_question_id is not None:
            copy = await session.get(Question, questions[question.id])
            assert copy is not None
            copy.dependency_question_id = questions.get_required(question.dependency_question_id)
    await _copy_links(session, question_items, "question_id", questions, items)


async def _copy_discounts(
    session: AsyncSession, source: Event, target: Event, items: IdMap
) -> None:
    discounts = IdMap("discount")
    for discount in await _all(session, Discount, source.id):
        copy = _copy(discount, event_id=target.id)
        session.add(copy)
        await session.flush()
        discounts[discount.id] = copy.id
    for table in (discount_condition_items, discount_benefit_items):
        await _copy_links(session, table, "discount_id", discounts, items)


async def _copy_links(
    session: AsyncSession, table: Any, owner_column: str, owners: IdMap, items: IdMap
) -> None:
    """Copies rows of an owner<->item association table between two id maps."""
    if not owners:
        return
    rows = (
        await session.execute(
            select(table.c[owner_column], table.c.item_id).where(
                table.c[owner_column].in_(list(owners))
            )
        )
    ).all()
    values = [
        {owner_column: owners[owner], "item_id": items.get_required(item)} for owner, item in rows
    ]
    if values:
        await session.execute(insert(table), values)


async def _all(session: AsyncSession, model: type[M], event_id: int) -> list[M]:
    query = select(model).where(model.event_id == event_id).order_by(model.id)  # type: ignore[attr-defined]
    return list((await session.execute(query)).scalars().all())
