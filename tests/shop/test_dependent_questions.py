"""Questions that depend on another question's answer: required only when the question they
depend on (shown itself) is answered with one of ``dependency_values``, and their answers left
out otherwise; enforced on the server for the pages and the headless API. The form marks them
for the shop's script (no inline script) and leaves the browser's ``required`` to it."""

from __future__ import annotations

import re

from sqlalchemy import insert, select

from admit.models import Answer, QuestionOption
from admit.shop import dependencies
from admit.shop.questions import dependency_fields
from tests.oauth.helpers import csrf
from tests.shop import helpers as h


async def _questions(factory, shop):
    guest = await h.question(factory, shop.event, shop.ticket, "Bringing a guest?", type="B")
    name = await h.question(
        factory,
        shop.event,
        shop.ticket,
        "Guest name",
        required=True,
        dependency_question_id=guest.id,
        dependency_values=["True"],
        identifier="GUESTNAME",
    )
    meal = await h.question(factory, shop.event, shop.ticket, "Meal", type="C", identifier="MEAL")
    async with factory.sessionmaker() as session:
        ids = []
        for ident, text in (("meat", "Meat"), ("veg", "Vegetarian"), ("other", "Other")):
            ids.append(
                await session.scalar(
                    insert(QuestionOption)
                    .values(question_id=meal.id, identifier=ident, answer={"en": text}, position=0)
                    .returning(QuestionOption.id)
                )
            )
        await session.commit()
    # depends on the meal being "other", and (a chain) is asked only when that is shown
    diet = await h.question(
        factory,
        shop.event,
        shop.ticket,
        "Which diet?",
        required=True,
        dependency_question_id=meal.id,
        dependency_values=["other", "veg"],
        identifier="DIET",
    )
    return guest, name, meal, ids, diet


async def test_the_form_requires_a_dependent_question_only_when_shown(client, world, factory):
    shop = await h.setup(factory, world)
    guest, name, meal, (meat, veg, other), diet = await _questions(factory, shop)
    front = f"/{world.org.slug}/{world.event.slug}/"
    token = csrf((await client.get(front)).text)
    await client.post(f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.ticket.id}": "1"})
    form = (await client.get(f"{front}checkout/")).text
    pid = re.search(rf'name="q_(\d+)_{name.id}"', form).group(1)  # type: ignore[union-attr]
    f = f"q_{pid}_"
    assert f'data-dep-field="{f}{guest.id}" data-dep-values="True" data-required="1"' in form
    assert f'data-dep-field="{f}{meal.id}" data-dep-values="{veg} {other}"' in form
    assert re.search(rf'<input id="{f}{name.id}" name="{f}{name.id}"\s+value=', form)  # no required
    assert "<script>" not in form
    # not shown: no answer needed, and a stray one is not kept
    r = await h.checkout_form(
        client, front, token, **{f"{f}{name.id}": "Stray", f"{f}{meal.id}": str(meat)}
    )
    assert r.status_code == 303, r.text
    async with factory.sessionmaker() as session:
        stored = {a.question_id: a.answer for a in (await session.scalars(select(Answer))).all()}
    assert name.id not in stored and diet.id not in stored and stored[guest.id] == "False"
    # shown: required
    await client.post(f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.ticket.id}": "1"})
    form = (await client.get(f"{front}checkout/")).text
    pid = re.search(rf'name="q_(\d+)_{name.id}"', form).group(1)  # type: ignore[union-attr]
    f = f"q_{pid}_"
    shown = {f"{f}{guest.id}": "True", f"{f}{meal.id}": str(veg)}
    r = await h.checkout_form(client, front, token, **shown)
    assert r.status_code == 400
    assert "Please answer &#34;Guest name&#34;" in r.text
    assert "Please answer &#34;Which diet?&#34;" in r.text
    r = await h.checkout_form(
        client, front, token, **shown, **{f"{f}{name.id}": "Grace", f"{f}{diet.id}": "Vegan"}
    )
    assert r.status_code == 303, r.text
    async with factory.sessionmaker() as session:
        texts = [a.answer for a in (await session.scalars(select(Answer))).all()]
    assert "Grace" in texts and "Vegan" in texts


async def test_the_headless_api_enforces_dependencies(client, world, factory):
    shop = await h.setup(factory, world)
    guest, name, meal, (meat, _veg, other), diet = await _questions(factory, shop)
    r = await h.cart(client, world, {"item": shop.ticket.id})
    cart_id, pid = r.json()["cart_id"], r.json()["positions"][0]["id"]

    async def buy(*answers):
        return await h.buy(
            client,
            world,
            cart_id,
            payment_provider="banktransfer",
            positions=[{"id": pid, "answers": list(answers)}],
        )

    r = await buy(
        {"question": guest.id, "answer": "true"}, {"question": meal.id, "options": [other]}
    )
    assert r.status_code == 400
    assert "Guest name" in str(r.json()) and "Which diet?" in str(r.json())
    r = await buy(
        {"question": guest.id, "answer": "false"},
        {"question": meal.id, "options": [meat]},
        {"question": diet.id, "answer": "dropped"},
    )
    assert r.status_code == 201, r.text
    async with factory.sessionmaker() as session:
        stored = {a.question_id for a in (await session.scalars(select(Answer))).all()}
    assert diet.id not in stored and name.id not in stored


def test_shown_follows_chains_and_cycles():
    class Q:
        def __init__(self, id, type="S", dep=None, values=(), options=()):
            self.id, self.type = id, type
            self.dependency_question_id, self.dependency_values = dep, list(values)
            self.options = list(options)

    class A:
        def __init__(self, question, answer=None, options=()):
            self.question, self.answer, self.options = question, answer, list(options)

    a, b, c = Q(1, "B"), Q(2, "S", 1, ["True"]), Q(3, "S", 2, ["x"])
    assert dependencies.shown([a, b, c], []) == {1}
    assert dependencies.shown([a, b, c], [A(1, "True"), A(2, "x")]) == {1, 2, 3}
    assert dependencies.shown([a, b, c], [A(1, "False"), A(2, "x")]) == {1}
    loop1, loop2 = Q(4, "S", 5, ["y"]), Q(5, "S", 4, ["y"])
    assert dependencies.shown([loop1, loop2], [A(4, "y"), A(5, "y")]) == set()
    orphan = Q(6, "S", 99, ["y"])  # depends on a question not asked for this product
    assert dependencies.shown([orphan], []) == set()
    assert dependency_fields([a, b, orphan], "q_7_") == {2: ("q_7_1", ["True"]), 6: ("", [])}
