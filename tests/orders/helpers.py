"""Catalog data for order tests, written straight to the database."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import insert

from admit.models import (
    Item,
    ItemVariation,
    Question,
    QuestionOption,
    Quota,
    TaxRule,
    question_items,
    quota_items,
    quota_variations,
)
from tests.factories import Factory, World


def url(world: World, rest: str = "orders/") -> str:
    return f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/{rest}"


async def item(
    factory: Factory, event, price: str = "10.00", *, quota: int | None = 100, **kw
) -> Item:
    async with factory.sessionmaker() as s:
        obj = Item(
            event_id=event.id,
            name={"en": kw.pop("name", "Ticket")},
            default_price=Decimal(price),
            **kw,
        )
        s.add(obj)
        await s.flush()
        if quota is not False:
            q = Quota(event_id=event.id, name=f"Q{obj.id}", size=quota)
            s.add(q)
            await s.flush()
            await s.execute(insert(quota_items).values(quota_id=q.id, item_id=obj.id))
        await s.commit()
        return obj


async def quota_of(factory: Factory, item_id: int) -> Quota:
    from sqlalchemy import select

    async with factory.sessionmaker() as s:
        return (
            await s.scalars(
                select(Quota).where(
                    Quota.id.in_(
                        select(quota_items.c.quota_id).where(quota_items.c.item_id == item_id)
                    )
                )
            )
        ).first()


async def variation(
    factory: Factory, item_obj: Item, price: str | None, quota_id: int | None = None
) -> ItemVariation:
    async with factory.sessionmaker() as s:
        var = ItemVariation(
            item_id=item_obj.id, value={"en": "V"}, default_price=Decimal(price) if price else None
        )
        s.add(var)
        await s.flush()
        if quota_id:
            await s.execute(insert(quota_variations).values(quota_id=quota_id, variation_id=var.id))
        await s.commit()
        return var


async def tax_rule(factory: Factory, event, rate: str = "19.00", includes: bool = True) -> TaxRule:
    async with factory.sessionmaker() as s:
        rule = TaxRule(
            event_id=event.id, name={"en": "VAT"}, rate=Decimal(rate), price_includes_tax=includes
        )
        s.add(rule)
        await s.commit()
        return rule


async def question(
    factory: Factory, event, items: list[Item], type_: str = "S", options: list[str] = (), **kw
) -> Question:
    async with factory.sessionmaker() as s:
        q = Question(
            event_id=event.id,
            question={"en": "Q?"},
            type=type_,
            identifier=kw.pop("identifier", f"Q{type_}{len(items)}{id(items)}"),
            **kw,
        )
        s.add(q)
        await s.flush()
        for i, text in enumerate(options):
            s.add(
                QuestionOption(
                    question_id=q.id, identifier=f"O{i}", answer={"en": text}, position=i
                )
            )
        for it in items:
            await s.execute(insert(question_items).values(question_id=q.id, item_id=it.id))
        await s.commit()
        return q


async def availability(client, world: World, factory: Factory, quota_id: int) -> int | None:
    from admit.quotas.availability import count

    async with factory.sessionmaker() as s:
        q = await s.get(Quota, quota_id)
        return (await count(s, [q]))[quota_id].available_number


def body(item_id: int, n: int = 1, **kw) -> dict:
    return {"email": "buyer@example.org", "positions": [{"item": item_id} for _ in range(n)], **kw}
