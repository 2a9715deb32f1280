"""Tax rule rules: one default rule per event, reverse charge needs a home country, and a
rule cannot be deleted while anything uses it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy import exists, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.catalog.taxes.schemas import TaxRuleIn
from admit.kit.http.errors import APIError, FieldErrors
from admit.models import Item, TaxRule

IN_USE = "This tax rule can not be deleted as it is currently in use."

# Checks answering whether something still uses a tax rule. Items are checked here; packages
# owning other users (orders, fees, settings) append theirs, so this one need not import them.
UsageGuard = Callable[[AsyncSession, TaxRule], Awaitable[bool]]


async def used_by_items(session: AsyncSession, rule: TaxRule) -> bool:
    return bool(await session.scalar(select(exists().where(Item.tax_rule_id == rule.id))))


deletion_guards: list[UsageGuard] = [used_by_items]


def validate_rule(data: TaxRuleIn) -> None:
    if data.eu_reverse_charge and not data.home_country:
        raise FieldErrors.single(
            "home_country", "You need to set your home country to use the reverse charge feature."
        )


async def apply_rule(session: AsyncSession, rule: TaxRule, data: TaxRuleIn) -> None:
    """Writes the values; making this rule the default takes the flag from the others."""
    for key, value in data.values().items():
        setattr(rule, key, value)
    if rule.id is None:
        session.add(rule)
    await session.flush()
    if data.default:
        await session.execute(
            update(TaxRule)
            .where(TaxRule.event_id == rule.event_id, TaxRule.id != rule.id, TaxRule.default)
            .values(default=False)
            .execution_options(synchronize_session=False)
        )


async def delete_rule(session: AsyncSession, rule: TaxRule) -> None:
    for guard in deletion_guards:
        if await guard(session, rule):
            raise APIError(403, IN_USE)
    await session.delete(rule)
    await session.flush()
