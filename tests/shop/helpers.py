"""Test data for the shop: a live event with products, quotas and the shop's settings."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import insert, select, update

from admit.models import Event, GiftCard, Item, Question, Voucher, question_items
from tests.factories import Factory, World

IBAN = "DE02120300000000202051"


def base(world: World, event: Event | None = None) -> str:
    ev = event or world.event
    return f"/api/v1/public/organizers/{world.org.slug}/events/{ev.slug}"


@dataclass
class Shop:
    event: Event
    ticket: Item
    free: Item
    quota: Any
    free_quota: Any


async def setup(factory: Factory, world: World, *, size: int = 10, **settings: Any) -> Shop:
    """Makes the world's event a live shop: a 23.00 ticket and a free one, bank transfer on."""
    values = {
        "payment_banktransfer__enabled": True,
        "payment_banktransfer_bank_details_sepa_name": "Acme Events",
        "payment_banktransfer_bank_details_sepa_iban": IBAN,
        "ticket_download": True,
        **settings,
    }
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Event).where(Event.id == world.event.id).values(live=True, settings=values)
        )
        await session.commit()
        event = await session.get(Event, world.event.id)
    ticket = await factory._add(
        Item(
            event_id=event.id, name={"en": "Ticket"}, default_price=Decimal("23.00"), admission=True
        )
    )
    free = await factory._add(
        Item(
            event_id=event.id,
            name={"en": "Free entry"},
            default_price=Decimal("0.00"),
            admission=True,
        )
    )
    quota = await factory.quota(event, size, items=[ticket], name="Tickets")
    free_quota = await factory.quota(event, size, items=[free], name="Free")
    return Shop(event, ticket, free, quota, free_quota)  # type: ignore[arg-type]


async def voucher(factory: Factory, event: Event, code: str, **kw: Any) -> Voucher:
    return await factory._add(Voucher(event_id=event.id, code=code, **kw))  # type: ignore[return-value]


async def question(factory: Factory, event: Event, item: Item, text: str, **kw: Any) -> Question:
    kw.setdefault("type", "S")
    kw.setdefault("identifier", text.upper()[:8])
    q = await factory._add(Question(event_id=event.id, question={"en": text}, **kw))
    async with factory.sessionmaker() as session:
        await session.execute(insert(question_items).values(question_id=q.id, item_id=item.id))
        await session.commit()
    return q  # type: ignore[return-value]


async def gift_card(factory: Factory, world: World, secret: str, value: str) -> GiftCard:
    return await factory._add(  # type: ignore[return-value]
        GiftCard(issuer_id=world.org.id, secret=secret, currency="EUR", value=Decimal(value))
    )


async def card_value(factory: Factory, card_id: int) -> Decimal:
    async with factory.sessionmaker() as session:
        return await session.scalar(select(GiftCard.value).where(GiftCard.id == card_id))


async def cart(
    client: Any,
    world: World,
    *products: dict[str, Any],
    voucher: str | None = None,
    cart_id: str | None = None,
    subevent: int | None = None,
) -> Any:
    body: dict[str, Any] = {"products": list(products)}
    if subevent is not None:
        body["subevent"] = subevent
    if voucher:
        body["voucher"] = voucher
    if cart_id:
        body["cart_id"] = cart_id
    return await client.post(f"{base(world)}/carts/", json=body)


async def checkout_form(
    client: Any, front: str, token: str, email: str = "ada@example.org", **kw: str
) -> Any:
    """Posts the shop's checkout page (bank transfer; ``email_repeat`` as ``email`` unless
    given)."""
    data = {"csrf_token": token, "email": email, "email_repeat": email, "payment": "banktransfer"}
    return await client.post(f"{front}checkout/", data={**data, **kw})


async def buy(client: Any, world: World, cart_id: str, **kw: Any) -> Any:
    body = {"cart_id": cart_id, "email": "buyer@example.org", **kw}
    return await client.post(f"{base(world)}/checkout/", json=body)


async def buy_with_card(client: Any, world: World, cart_id: str, code: str) -> Any:
    """Checks the cart out paid with the gift card ``code``."""
    data = {"gift_card": code}
    return await buy(client, world, cart_id, payment_provider="giftcard", payment_data=data)


@dataclass
class Series:
    shop: Shop
    early: Any  # SubEvent: the ticket's price overridden to 30.00, quota 2
    late: Any  # SubEvent: the catalog price, quota 1
    past: Any  # SubEvent that is over (never listed)


async def series(factory: Factory, world: World, **settings: Any) -> Series:
    """Makes the world's event a live series with two upcoming dates (their own quotas) and
    one past date."""
    import datetime as dt

    from admit.models import SubEvent, SubEventItem

    shop = await setup(factory, world, **settings)
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Event).where(Event.id == world.event.id).values(has_subevents=True)
        )
        await session.commit()
    now = dt.datetime.now(dt.UTC)
    made = []
    for name, days in (("Matinee", 10), ("Evening", 20), ("Old", -5)):
        made.append(
            await factory._add(
                SubEvent(
                    event_id=world.event.id,
                    name={"en": name},
                    active=True,
                    date_from=now + dt.timedelta(days=days),
                )
            )
        )
    early, late, past = made
    await factory._add(
        SubEventItem(subevent_id=early.id, item_id=shop.ticket.id, price=Decimal("30.00"))
    )
    await factory.quota(shop.event, 2, items=[shop.ticket], name="Early", subevent=early)
    await factory.quota(shop.event, 1, items=[shop.ticket], name="Late", subevent=late)
    await factory.quota(shop.event, 5, items=[shop.ticket], name="Past", subevent=past)
    return Series(shop, early, late, past)


async def reverse_charge_rule(factory: Factory, shop: Shop, *items: Item) -> Any:
    """19 % VAT included, EU reverse charge from Germany, on the shop's 23.00 ticket (or on
    ``items``)."""
    from admit.models import TaxRule

    rule = await factory._add(
        TaxRule(
            event_id=shop.event.id,
            name={"en": "VAT"},
            rate=Decimal("19.00"),
            price_includes_tax=True,
            eu_reverse_charge=True,
            home_country="DE",
        )
    )
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Item)
            .where(Item.id.in_([i.id for i in items or (shop.ticket,)]))
            .values(tax_rule_id=rule.id)
        )
        await session.commit()
    return rule


@dataclass
class Extras:
    shirt: Item  # an add-on (category "Merch", 0..2 per ticket), 15.00
    parking: Item  # an add-on (category "Parking", at least 1 per VIP ticket), included
    vip: Item  # 60.00, with a bundled drink voucher (designated 5.00) and both add-on kinds
    drink: Item  # the bundled product
    addon_rule: Any


async def extras(
    factory: Factory, shop: Shop, *, parking_min: int = 0, subevent: Any = None
) -> Extras:
    """Add-ons and a bundle on top of the shop: VIP tickets come with a drink and offer
    shirts and parking."""
    from admit.models import ItemAddOn, ItemBundle, ItemCategory

    ev = shop.event.id
    merch = await factory._add(ItemCategory(event_id=ev, name={"en": "Merch"}, is_addon=True))
    park = await factory._add(ItemCategory(event_id=ev, name={"en": "Parking"}, is_addon=True))

    def item(name: str, price: str, **kw: Any) -> Item:
        return Item(event_id=ev, name={"en": name}, default_price=Decimal(price), **kw)

    shirt = await factory._add(item("Shirt", "15.00", category_id=merch.id))
    parking = await factory._add(item("Parking", "8.00", category_id=park.id))
    drink = await factory._add(item("Drink", "6.00"))
    vip = await factory._add(item("VIP", "60.00", admission=True))
    rule = await factory._add(
        ItemAddOn(
            base_item_id=vip.id, addon_category_id=merch.id, min_count=0, max_count=2,
            multi_allowed=True,
        )
    )  # fmt: skip
    await factory._add(
        ItemAddOn(
            base_item_id=vip.id, addon_category_id=park.id, min_count=parking_min, max_count=1,
            price_included=True, position=1,
        )
    )  # fmt: skip
    await factory._add(
        ItemBundle(
            base_item_id=vip.id, bundled_item_id=drink.id, count=1,
            designated_price=Decimal("5.00"),
        )
    )  # fmt: skip
    on = {"subevent": subevent} if subevent is not None else {}
    await factory.quota(shop.event, 10, items=[vip, drink], name="VIP", **on)
    await factory.quota(shop.event, 3, items=[shirt], name="Shirts", **on)
    await factory.quota(shop.event, 10, items=[parking], name="Parking", **on)
    return Extras(shirt, parking, vip, drink, rule)  # type: ignore[arg-type]
