"""Cloning an event copies its catalog, and nothing in the copy points back into the source."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, insert, select

from admit.models import (
    Discount,
    Event,
    Item,
    ItemAddOn,
    ItemBundle,
    ItemCategory,
    ItemVariation,
    Question,
    QuestionOption,
    TaxRule,
    category_cross_selling_items,
    discount_benefit_items,
    discount_condition_items,
    question_items,
)
from tests.factories import World, auth

EVENTS = "/api/v1/organizers/acme/events/"
NEW = {"name": {"en": "Summit 2031"}, "slug": "summit31", "date_from": "2031-05-01T10:00:00Z"}


async def build_catalog(sessionmaker, event: Event) -> dict[str, int]:
    async with sessionmaker() as s:
        rule = TaxRule(event_id=event.id, name={"en": "VAT"}, rate=Decimal("19.00"), default=True)
        tickets = ItemCategory(event_id=event.id, name={"en": "Tickets"})
        extras = ItemCategory(event_id=event.id, name={"en": "Extras"}, is_addon=True)
        s.add_all([rule, tickets, extras])
        await s.flush()
        ticket = Item(
            event_id=event.id, name={"en": "Ticket"}, default_price=Decimal("100.00"),
            category_id=tickets.id, tax_rule_id=rule.id, admission=True,
        )  # fmt: skip
        shirt = Item(event_id=event.id, name={"en": "Shirt"}, category_id=extras.id)
        s.add_all([ticket, shirt])
        await s.flush()
        size = ItemVariation(item_id=shirt.id, value={"en": "M"}, default_price=Decimal("20"))
        s.add(size)
        await s.flush()
        s.add(ItemAddOn(base_item_id=ticket.id, addon_category_id=extras.id, max_count=2))
        s.add(ItemBundle(base_item_id=ticket.id, bundled_item_id=shirt.id,
                         bundled_variation_id=size.id))  # fmt: skip
        await s.execute(
            insert(category_cross_selling_items).values(category_id=tickets.id, item_id=shirt.id)
        )
        diet = Question(event_id=event.id, question={"en": "Diet?"}, type="C", identifier="DIET")
        s.add(diet)
        await s.flush()
        vegan = QuestionOption(question_id=diet.id, identifier="VEGAN", answer={"en": "Vegan"})
        s.add(vegan)
        why = Question(
            event_id=event.id, question={"en": "Why?"}, type="S", identifier="WHY",
            dependency_question_id=diet.id, dependency_values=["VEGAN"],
        )  # fmt: skip
        s.add(why)
        await s.flush()
        await s.execute(insert(question_items).values(question_id=diet.id, item_id=ticket.id))
        discount = Discount(event_id=event.id, internal_name="3 for 2", condition_min_count=3,
                            benefit_discount_matching_percent=Decimal("100"),
                            benefit_only_apply_to_cheapest_n_matches=1,
                            condition_all_products=False)  # fmt: skip
        s.add(discount)
        await s.flush()
        await s.execute(
            insert(discount_condition_items).values(discount_id=discount.id, item_id=ticket.id)
        )
        await s.execute(
            insert(discount_benefit_items).values(discount_id=discount.id, item_id=ticket.id)
        )
        await s.commit()
        return {"ticket": ticket.id, "shirt": shirt.id, "diet": diet.id}


async def _event(sessionmaker, slug: str) -> Event:
    async with sessionmaker() as s:
        return (await s.execute(select(Event).where(Event.slug == slug))).scalar_one()


async def assert_self_contained(sessionmaker, source: Event, target: Event) -> None:
    async with sessionmaker() as s:

        async def ids(model, event_id):
            rows = await s.execute(select(model.id).where(model.event_id == event_id))
            return set(rows.scalars())

        t_items, s_items = await ids(Item, target.id), await ids(Item, source.id)
        t_cats = await ids(ItemCategory, target.id)
        t_rules = await ids(TaxRule, target.id)
        t_questions = await ids(Question, target.id)
        t_discounts = await ids(Discount, target.id)
        assert len(t_items) == len(s_items) == 2 and not t_items & s_items
        assert len(t_cats) == 2 and len(t_rules) == 1 and len(t_questions) == 2
        assert len(t_discounts) == 1

        for item in (await s.execute(select(Item).where(Item.id.in_(t_items)))).scalars():
            assert item.category_id in t_cats
            assert item.tax_rule_id is None or item.tax_rule_id in t_rules
        t_vars = set(
            (
                await s.execute(select(ItemVariation.id).where(ItemVariation.item_id.in_(t_items)))
            ).scalars()
        )
        assert len(t_vars) == 1
        addons = (
            (await s.execute(select(ItemAddOn).where(ItemAddOn.base_item_id.in_(t_items))))
            .scalars()
            .all()
        )
        assert len(addons) == 1 and addons[0].addon_category_id in t_cats
        bundles = (
            (await s.execute(select(ItemBundle).where(ItemBundle.base_item_id.in_(t_items))))
            .scalars()
            .all()
        )
        assert len(bundles) == 1
        assert bundles[0].bundled_item_id in t_items and bundles[0].bundled_variation_id in t_vars
        for table, owner, owners in (
            (category_cross_selling_items, "category_id", t_cats),
            (question_items, "question_id", t_questions),
            (discount_condition_items, "discount_id", t_discounts),
            (discount_benefit_items, "discount_id", t_discounts),
        ):
            rows = (
                await s.execute(select(table.c.item_id).where(table.c[owner].in_(owners)))
            ).all()
            assert rows, f"{table.name} not copied"
            assert {r[0] for r in rows} <= t_items, f"{table.name} points outside the copy"
        questions = (
            (await s.execute(select(Question).where(Question.id.in_(t_questions)))).scalars().all()
        )
        dependent = [q for q in questions if q.dependency_question_id is not None]
        assert len(dependent) == 1 and dependent[0].dependency_question_id in t_questions
        options = await s.scalar(
            select(func.count()).where(QuestionOption.question_id.in_(t_questions))
        )
        assert options == 1


async def test_create_with_clone_from_copies_the_catalog(client, world: World, factory):
    source = world.event
    await build_catalog(factory.sessionmaker, source)
    r = await client.post(f"{EVENTS}?clone_from=summit", json=NEW, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    assert r.json()["slug"] == "summit31"
    target = await _event(factory.sessionmaker, "summit31")
    await assert_self_contained(factory.sessionmaker, source, target)
    # The source is untouched.
    async with factory.sessionmaker() as s:
        assert await s.scalar(select(func.count()).where(Item.event_id == source.id)) == 2


async def test_clone_endpoint_copies_and_takes_overrides_from_the_body(client, world, factory):
    async with factory.sessionmaker() as s:
        event = await s.get(Event, world.event.id)
        event.plugins = ["sendmail"]
        event.is_public = False
        event.timezone = "Europe/Berlin"
        await s.commit()
    await build_catalog(factory.sessionmaker, world.event)
    body = {**NEW, "plugins": ["autocheckin"]}
    r = await client.post(f"{EVENTS}summit/clone/", json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    data = r.json()
    assert data["plugins"] == ["autocheckin"]  # from the body
    assert data["is_public"] is False  # copied from the source
    assert data["timezone"] == "Europe/Berlin"
    assert data["live"] is False
    target = await _event(factory.sessionmaker, "summit31")
    await assert_self_contained(factory.sessionmaker, world.event, target)


async def test_clone_from_with_organizer_prefix(client, world: World, factory):
    await build_catalog(factory.sessionmaker, world.event)
    r = await client.post(f"{EVENTS}?clone_from=acme/summit", json=NEW, headers=auth(world.admin))
    assert r.status_code == 201, r.text


async def test_clone_from_an_event_the_caller_cannot_read_is_403(client, world: World, factory):
    for source in ("rival/expo", "nope", "acme/nope", "nope/summit"):
        r = await client.post(f"{EVENTS}?clone_from={source}", json=NEW, headers=auth(world.admin))
        assert r.status_code == 403, (source, r.text)
    # A team limited to another event cannot clone summit either.
    other = await factory.event(world.org, "other")
    team = await factory.team(
        world.org,
        all_events=False,
        events=[other],
        organizer_permissions=["organizer.events:create"],
    )
    token = await factory.token(team)
    r = await client.post(f"{EVENTS}?clone_from=summit", json=NEW, headers=auth(token))
    assert r.status_code == 403
    async with factory.sessionmaker() as s:
        assert await s.scalar(select(func.count()).where(Event.slug == "summit31")) == 0


async def test_clone_needs_the_event_creation_permission(client, world: World, factory):
    team = await factory.team(world.org, event_permissions=["event.items:write"])
    token = await factory.token(team)
    r = await client.post(f"{EVENTS}summit/clone/", json=NEW, headers=auth(token))
    assert r.status_code == 403


async def test_clone_validates_the_body_like_create(client, world: World):
    r = await client.post(
        f"{EVENTS}summit/clone/", json={**NEW, "slug": "summit"}, headers=auth(world.admin)
    )
    assert r.status_code == 400 and "slug" in r.json()
    r = await client.post(
        f"{EVENTS}summit/clone/", json={**NEW, "live": True}, headers=auth(world.admin)
    )
    assert r.status_code == 400 and "live" in r.json()


async def test_clone_of_an_empty_event(client, world: World):
    r = await client.post(f"{EVENTS}summit/clone/", json=NEW, headers=auth(world.admin))
    assert r.status_code == 201
    r = await client.get(f"{EVENTS}summit31/", headers=auth(world.admin))
    assert r.status_code == 200
