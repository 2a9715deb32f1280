"""Scheduled e-mail rules ``E/sendmail_rules/`` (CRUD; the event's ``sendmail`` plugin must be
enabled, else 403), read and written with ``event.settings.general:write``.

Rules across fields hold on the whole (for PATCH: merged) state: an absolute rule needs
``send_date``, a relative one ``send_offset_days`` and ``send_offset_time``; placeholders in
``subject`` and ``template`` must be known (see :mod:`admit.sendmail.placeholders`). The
deprecated ``include_pending``, sent without ``restrict_to_status``, sets the pending states:
true adds ``n__not_pending_approval_and_not_valid_if_pending`` to the default states, false
gives the default; it reads back as whether that state is included. Deleting a rule always
works (nothing else refers to one); its record of sent mails goes with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.events.plugins import canonical_plugin
from admit.kit.http.context import EventContext, OrgContext
from admit.kit.http.errors import FieldErrors, forbidden
from admit.kit.http.responses import JSONResponse
from admit.kit.resources.crud import Resource
from admit.kit.resources.pagination import paginate
from admit.models import Event, Item, SendMailRule, sendmail_rule_items
from admit.sendmail import placeholders
from admit.sendmail.schemas import DEFAULT_STATUSES, PENDING, SendMailRuleIn, SendMailRuleOut

PLUGIN = "sendmail"
PLUGIN_DISABLED = "The sendmail plugin is not enabled for this event."
PERMISSION = "event.settings.general:write"

COLUMNS = (
    "enabled subject template all_products restrict_to_status checked_in_status "
    "date_is_absolute send_date send_offset_days send_offset_time offset_to_event_end "
    "offset_is_after send_to"
).split()


def has_plugin(plugins: Sequence[str] | None) -> bool:
    return PLUGIN in {canonical_plugin(p) for p in plugins or ()}


def plugin_enabled(event: Event) -> bool:
    return has_plugin(event.plugins)


def rule_errors(data: SendMailRuleIn) -> dict[str, list[str]]:
    """Rules across fields and the placeholders of the texts."""
    errors: dict[str, list[str]] = {}
    if data.date_is_absolute:
        if data.send_date is None:
            errors["send_date"] = ["This field is required when date_is_absolute is true."]
    else:
        for name in ("send_offset_days", "send_offset_time"):
            if getattr(data, name) is None:
                errors[name] = ["This field is required when date_is_absolute is false."]
    if not data.restrict_to_status:
        errors["restrict_to_status"] = ["Choose at least one order state."]
    for name in ("subject", "template"):
        texts: dict[str, str] = getattr(data, name)
        found = []
        for lang, text in texts.items():
            prefix = f"{lang}: " if len(texts) > 1 else ""
            found += [prefix + problem for problem in placeholders.problems(text)]
        if found:
            errors[name] = found
    return errors


def effective_statuses(data: SendMailRuleIn, supplied: set[str]) -> list[str]:
    if "include_pending" in supplied and "restrict_to_status" not in supplied:
        if data.include_pending:
            return [*DEFAULT_STATUSES, PENDING]
        return list(DEFAULT_STATUSES)
    return list(data.restrict_to_status)


def rule_to_read(rule: SendMailRule, products: list[int]) -> dict[str, Any]:
    data = {name: getattr(rule, name) for name in COLUMNS}
    data["id"] = rule.id
    data["limit_products"] = products
    data["include_pending"] = PENDING in (rule.restrict_to_status or ())
    return SendMailRuleOut.model_validate(data).model_dump(mode="json")


async def rule_products(session: AsyncSession, ids: Sequence[int]) -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    if ids:
        for rule_id, item_id in await session.execute(
            select(sendmail_rule_items.c.rule_id, sendmail_rule_items.c.item_id)
            .where(sendmail_rule_items.c.rule_id.in_(ids))
            .order_by(sendmail_rule_items.c.item_id)
        ):
            found.setdefault(rule_id, []).append(item_id)
    return found


class SendMailRules(Resource[SendMailRule]):
    name = "sendmail_rules"
    path = "/organizers/{organizer}/events/{event}/sendmail_rules"
    model = SendMailRule
    read_schema = SendMailRuleOut
    write_schema = SendMailRuleIn
    read_permission = PERMISSION
    write_permission = PERMISSION
    tag = "sendmail"

    async def prepare(self, ctx: OrgContext, params: dict[str, str]) -> None:
        assert isinstance(ctx, EventContext)
        if not plugin_enabled(ctx.event):
            raise forbidden(PLUGIN_DISABLED)

    def list_query(self, ctx: OrgContext) -> Any:
        return self.base_query(ctx).order_by(SendMailRule.id)

    def serialize_many(self, ctx: OrgContext, objs: Sequence[SendMailRule]) -> list[dict[str, Any]]:
        products = ctx.extra.get("products", {})
        return [rule_to_read(r, products.get(r.id, [])) for r in objs]

    def serialize(self, ctx: OrgContext, obj: SendMailRule) -> dict[str, Any]:
        return self.serialize_many(ctx, [obj])[0]

    async def handle_list(self, ctx: OrgContext) -> Any:
        body = await paginate(ctx.request, ctx.session, self.list_query(ctx), list)
        ctx.extra["products"] = await rule_products(ctx.session, [r.id for r in body["results"]])
        body["results"] = self.serialize_many(ctx, body["results"])
        return JSONResponse(body)

    async def get_object(self, ctx: OrgContext, raw_pk: str) -> SendMailRule:
        obj = await super().get_object(ctx, raw_pk)
        ctx.extra["products"] = await rule_products(ctx.session, [obj.id])
        return obj

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: SendMailRule | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, SendMailRuleIn) and isinstance(ctx, EventContext)
        errors = rule_errors(data)
        if data.limit_products:
            found = set(
                await ctx.session.scalars(
                    select(Item.id).where(
                        Item.event_id == ctx.event.id, Item.id.in_(data.limit_products)
                    )
                )
            )
            missing = [pk for pk in data.limit_products if pk not in found]
            if missing:
                errors["limit_products"] = [
                    f'Invalid pk "{pk}" - object does not exist.' for pk in missing
                ]
        if errors:
            raise FieldErrors(errors)

    def apply(
        self, ctx: OrgContext, obj: SendMailRule, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, SendMailRuleIn)
        for name in COLUMNS:
            setattr(obj, name, getattr(data, name))
        obj.restrict_to_status = effective_statuses(data, supplied)

    async def perform_create(self, ctx: OrgContext, data: BaseModel, supplied: set[str]) -> Any:
        obj = await super().perform_create(ctx, data, supplied)
        await _replace_products(ctx.session, obj.id, data)  # type: ignore[arg-type]
        return obj

    async def perform_update(
        self, ctx: OrgContext, obj: SendMailRule, data: BaseModel, supplied: set[str]
    ) -> None:
        await super().perform_update(ctx, obj, data, supplied)
        await _replace_products(ctx.session, obj.id, data)  # type: ignore[arg-type]


async def _replace_products(session: AsyncSession, rule_id: int, data: SendMailRuleIn) -> None:
    table = sendmail_rule_items
    await session.execute(delete(table).where(table.c.rule_id == rule_id))
    if data.limit_products:
        await session.execute(
            insert(table), [{"rule_id": rule_id, "item_id": i} for i in data.limit_products]
        )


sendmail_rules = SendMailRules()
