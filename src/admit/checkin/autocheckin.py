"""Auto check-in rules ``E/auto_checkin_rules/`` (CRUD; the event's ``autocheckin`` plugin must
be enabled, else 403) and applying them when orders are placed or paid.

A rule with mode ``placed`` applies right after an order is created, ``paid`` when it becomes
paid (created paid, marked paid, or approved free). It matches a ticket by sales channel,
product (all variations of a listed item, or listed variations) and payment method, and checks
it in on its list, or on every list of the event the ticket is on. A ticket already checked in
on a list is left alone there. The check-ins are ``auto_checked_in`` entries written in the
order's transaction (the check-ins table is the ``service.event.checkin`` outbox).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from sqlalchemy import bindparam, delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.checkin.access import CONFIGURE
from admit.checkin.schemas import AutoCheckinRuleIn, AutoCheckinRuleOut
from admit.db import utcnow
from admit.events.plugins import SALES_CHANNELS, canonical_plugin
from admit.kit.http.context import EventContext, OrgContext
from admit.kit.http.errors import FieldErrors, forbidden
from admit.kit.resources.crud import Resource
from admit.models import (
    AutoCheckinRule,
    Checkin,
    CheckinList,
    Event,
    Item,
    ItemVariation,
    Order,
    OrderPayment,
    OrderPosition,
    auto_checkin_rule_items,
    auto_checkin_rule_variations,
    checkin_list_items,
)
from admit.orders import hooks

PLUGIN = "autocheckin"
PLUGIN_DISABLED = "The autocheckin plugin is not enabled for this event."


def plugin_enabled(event: Event) -> bool:
    return PLUGIN in {canonical_plugin(p) for p in event.plugins or ()}


def invalid_pk(pk: object) -> str:
    return f'Invalid pk "{pk}" - object does not exist.'


class AutoCheckinRules(Resource[AutoCheckinRule]):
    name = "auto_checkin_rules"
    path = "/organizers/{organizer}/events/{event}/auto_checkin_rules"
    model = AutoCheckinRule
    read_schema = AutoCheckinRuleOut
    write_schema = AutoCheckinRuleIn
    read_permission = CONFIGURE
    write_permission = CONFIGURE
    tag = "checkin"

    async def prepare(self, ctx: OrgContext, params: dict[str, str]) -> None:
        assert isinstance(ctx, EventContext)
        if not plugin_enabled(ctx.event):
            raise forbidden(PLUGIN_DISABLED)

    def serialize_many(
        self, ctx: OrgContext, objs: Sequence[AutoCheckinRule]
    ) -> list[dict[str, Any]]:
        items, variations = ctx.extra.get("links", ({}, {}))
        return [
            AutoCheckinRuleOut.model_validate(
                {
                    "id": r.id,
                    "list": r.list_id,
                    "mode": r.mode,
                    "all_sales_channels": r.all_sales_channels,
                    "limit_sales_channels": list(r.limit_sales_channels or []),
                    "all_products": r.all_products,
                    "limit_products": items.get(r.id, []),
                    "limit_variations": variations.get(r.id, []),
                    "all_payment_methods": r.all_payment_methods,
                    "limit_payment_methods": list(r.limit_payment_methods or []),
                }
            ).model_dump(mode="json")
            for r in objs
        ]

    def serialize(self, ctx: OrgContext, obj: AutoCheckinRule) -> dict[str, Any]:
        return self.serialize_many(ctx, [obj])[0]

    async def handle_list(self, ctx: OrgContext) -> Any:
        from admit.kit.http.responses import JSONResponse
        from admit.kit.resources.pagination import paginate

        body = await paginate(ctx.request, ctx.session, self.list_query(ctx), list)
        ctx.extra["links"] = await rule_links(ctx.session, [r.id for r in body["results"]])
        body["results"] = self.serialize_many(ctx, body["results"])
        return JSONResponse(body)

    async def get_object(self, ctx: OrgContext, raw_pk: str) -> AutoCheckinRule:
        obj = await super().get_object(ctx, raw_pk)
        ctx.extra["links"] = await rule_links(ctx.session, [obj.id])
        return obj

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: AutoCheckinRule | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, AutoCheckinRuleIn) and isinstance(ctx, EventContext)
        errors: dict[str, list[str]] = {}
        session, event_id = ctx.session, ctx.event.id
        if data.list is not None:
            found = await session.scalar(
                select(CheckinList.id).where(
                    CheckinList.id == data.list, CheckinList.event_id == event_id
                )
            )
            if found is None:
                errors["list"] = [invalid_pk(data.list)]
        if data.limit_products:
            found_items = set(
                await session.scalars(
                    select(Item.id).where(
                        Item.event_id == event_id, Item.id.in_(data.limit_products)
                    )
                )
            )
            missing = [pk for pk in data.limit_products if pk not in found_items]
            if missing:
                errors["limit_products"] = [invalid_pk(pk) for pk in missing]
        if data.limit_variations:
            found_vars = set(
                await session.scalars(
                    select(ItemVariation.id)
                    .join(Item, Item.id == ItemVariation.item_id)
                    .where(Item.event_id == event_id, ItemVariation.id.in_(data.limit_variations))
                )
            )
            missing = [pk for pk in data.limit_variations if pk not in found_vars]
            if missing:
                errors["limit_variations"] = [invalid_pk(pk) for pk in missing]
        unknown = [c for c in data.limit_sales_channels if c not in SALES_CHANNELS]
        if unknown:
            errors["limit_sales_channels"] = [f'"{c}" is not a valid choice.' for c in unknown]
        if errors:
            raise FieldErrors(errors)

    def apply(
        self, ctx: OrgContext, obj: AutoCheckinRule, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, AutoCheckinRuleIn)
        obj.list_id = data.list
        for name in (
            "mode all_sales_channels limit_sales_channels all_products all_payment_methods "
            "limit_payment_methods"
        ).split():
            setattr(obj, name, getattr(data, name))

    async def perform_create(self, ctx: OrgContext, data: BaseModel, supplied: set[str]) -> Any:
        obj = await super().perform_create(ctx, data, supplied)
        await _replace_links(ctx.session, obj, data)  # type: ignore[arg-type]
        return obj

    async def perform_update(
        self, ctx: OrgContext, obj: AutoCheckinRule, data: BaseModel, supplied: set[str]
    ) -> None:
        await super().perform_update(ctx, obj, data, supplied)
        await _replace_links(ctx.session, obj, data)  # type: ignore[arg-type]


async def rule_links(session: AsyncSession, ids: Sequence[int]) -> tuple[dict, dict]:
    items: dict[int, list[int]] = {}
    variations: dict[int, list[int]] = {}
    if ids:
        for rule_id, item_id in await session.execute(
            select(auto_checkin_rule_items.c.rule_id, auto_checkin_rule_items.c.item_id)
            .where(auto_checkin_rule_items.c.rule_id.in_(ids))
            .order_by(auto_checkin_rule_items.c.item_id)
        ):
            items.setdefault(rule_id, []).append(item_id)
        for rule_id, variation_id in await session.execute(
            select(
                auto_checkin_rule_variations.c.rule_id,
                auto_checkin_rule_variations.c.variation_id,
            )
            .where(auto_checkin_rule_variations.c.rule_id.in_(ids))
            .order_by(auto_checkin_rule_variations.c.variation_id)
        ):
            variations.setdefault(rule_id, []).append(variation_id)
    return items, variations


async def _replace_links(
    session: AsyncSession, obj: AutoCheckinRule, data: AutoCheckinRuleIn
) -> None:
    for table in (auto_checkin_rule_items, auto_checkin_rule_variations):
        await session.execute(delete(table).where(table.c.rule_id == obj.id))
    if data.limit_products:
        await session.execute(
            insert(auto_checkin_rule_items),
            [{"rule_id": obj.id, "item_id": i} for i in data.limit_products],
        )
    if data.limit_variations:
        await session.execute(
            insert(auto_checkin_rule_variations),
            [{"rule_id": obj.id, "variation_id": v} for v in data.limit_variations],
        )


auto_checkin_rules = AutoCheckinRules()


# -- applying the rules -----------------------------------------------------------------------


def _rule_matches(
    rule: AutoCheckinRule,
    items: dict[int, list[int]],
    variations: dict[int, list[int]],
    position: OrderPosition,
    channel: str,
    providers: set[str],
) -> bool:
    if not rule.all_sales_channels and channel not in (rule.limit_sales_channels or []):
        return False
    if not rule.all_payment_methods and not providers & set(rule.limit_payment_methods or []):
        return False
    if rule.all_products:
        return True
    return position.item_id in items.get(rule.id, []) or (
        position.variation_id is not None and position.variation_id in variations.get(rule.id, [])
    )


async def apply_rules(
    session: AsyncSession, order: Order, positions: Sequence[OrderPosition], mode: str
) -> None:
    """Checks the order's tickets in as its event's ``mode`` rules say."""
    event = await session.get(Event, order.event_id)
    if event is None or not plugin_enabled(event):
        return
    rules = list(
        await session.scalars(
            select(AutoCheckinRule)
            .where(AutoCheckinRule.event_id == order.event_id, AutoCheckinRule.mode == mode)
            .order_by(AutoCheckinRule.id)
        )
    )
    live = [p for p in positions if not p.canceled]
    if not rules or not live:
        return
    items, variations = await rule_links(session, [r.id for r in rules])
    providers = set(
        await session.scalars(
            select(OrderPayment.provider).where(OrderPayment.order_id == order.id)
        )
    )
    lists = list(await session.scalars(select(CheckinList).where(CheckinList.event_id == event.id)))
    on_lists: dict[int, set[int]] = {}
    for list_id, item_id in await session.execute(
        select(checkin_list_items.c.list_id, checkin_list_items.c.item_id).where(
            checkin_list_items.c.list_id.in_([c.id for c in lists])
        )
    ):
        on_lists.setdefault(list_id, set()).add(item_id)
    wanted: list[tuple[OrderPosition, CheckinList]] = []
    for position in live:
        for rule in rules:
            if not _rule_matches(rule, items, variations, position, order.sales_channel, providers):
                continue
            for clist in lists:
                if rule.list_id not in (None, clist.id):
                    continue
                if not clist.all_products and position.item_id not in on_lists.get(clist.id, ()):
                    continue
                if clist.subevent_id is not None and position.subevent_id != clist.subevent_id:
                    continue
                if (position, clist) not in wanted:
                    wanted.append((position, clist))
    if wanted:
        await _check_in(session, event, wanted)


async def _check_in(
    session: AsyncSession, event: Event, wanted: list[tuple[OrderPosition, CheckinList]]
) -> None:
    """Auto check-ins (entries) for the pairs whose ticket has none on that list yet."""
    ids = {p.id for p, _ in wanted}
    taken: dict[tuple[int, int], int] = {}
    inside: set[tuple[int, int]] = set()
    for pos_id, list_id, seq, successful in await session.execute(
        select(
            Checkin.position_id,
            Checkin.list_id,
            func.coalesce(Checkin.seq, 0),
            Checkin.successful,
        ).where(Checkin.position_id.in_(ids))
    ):
        key = (pos_id, list_id)
        taken[key] = max(taken.get(key, 0), seq)
        if successful:
            inside.add(key)
    now = utcnow()
    for position, clist in wanted:
        key = (position.id, clist.id)
        if key in inside:
            continue
        session.add(
            Checkin(
                event_id=event.id,
                list_id=clist.id,
                position_id=position.id,
                seq=taken.get(key, 0) + 1,
                type="entry",
                datetime=now,
                created=now,
                successful=True,
                auto_checked_in=True,
            )
        )
    await session.flush()


async def on_placed(
    session: AsyncSession, order: Order, positions: Sequence[OrderPosition]
) -> None:
    await apply_rules(session, order, positions, "placed")


async def on_paid(session: AsyncSession, order: Order, positions: Sequence[OrderPosition]) -> None:
    await apply_rules(session, order, positions, "paid")


def _idle(event: Event, _items: object, _order: object) -> bool:
    """Rules apply only where the plugin is enabled (and only where there are rules)."""
    return not plugin_enabled(event)


_HAS_RULES = select(AutoCheckinRule.id).where(AutoCheckinRule.event_id == bindparam("event_id"))

hooks.register(hooks.order_placed_hooks, on_placed, idle=_idle, active_if=_HAS_RULES)
hooks.register(hooks.order_paid_hooks, on_paid, idle=_idle, active_if=_HAS_RULES)
