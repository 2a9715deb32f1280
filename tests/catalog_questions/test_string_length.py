"""``valid_string_length_min`` / ``_max`` of text questions: set through the API, checked
against each other and the type, and enforced on answers (orders, positions, carts)."""

from __future__ import annotations

from sqlalchemy import insert

from admit.models import Question, question_items
from tests.factories import auth
from tests.orders import helpers as h


def qurl(world) -> str:
    return f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/questions/"


async def test_min_length_is_a_text_setting(client, world):
    post = lambda **kw: client.post(  # noqa: E731
        qurl(world),
        json={"question": "Why?", "identifier": f"why{len(kw)}", **kw},
        headers=auth(world.admin),
    )
    ok = await post(type="T", valid_string_length_min=3, valid_string_length_max=10)
    assert ok.status_code == 201, ok.text
    assert ok.json()["valid_string_length_min"] == 3
    got = await client.get(f"{qurl(world)}{ok.json()['id']}/", headers=auth(world.admin))
    assert got.json()["valid_string_length_min"] == 3
    wrong_type = await post(type="N", valid_string_length_min=3)
    assert wrong_type.json() == {
        "valid_string_length_min": ["This setting only applies to text questions."]
    }
    crossed = await post(type="S", valid_string_length_min=5, valid_string_length_max=4)
    assert crossed.status_code == 400
    assert "valid_string_length_max" in crossed.json()
    for bad in (-1, "many", 2**40):
        r = await post(type="S", valid_string_length_min=bad)
        assert r.status_code == 400 and "valid_string_length_min" in r.json()
    plain = await post(type="S")
    assert plain.json()["valid_string_length_min"] is None


async def test_answers_are_held_to_both_bounds(client, world, factory):
    item = await h.item(factory, world.event)
    async with factory.sessionmaker() as s:
        q = Question(
            event_id=world.event.id,
            question={"en": "Code"},
            type="S",
            identifier="code",
            valid_string_length_min=3,
            valid_string_length_max=5,
        )
        s.add(q)
        await s.flush()
        await s.execute(insert(question_items).values(question_id=q.id, item_id=item.id))
        await s.commit()
        qid = q.id

    def order(answer: str) -> dict:
        return {"positions": [{"item": item.id, "answers": [{"question": qid, "answer": answer}]}]}

    short = await client.post(h.url(world), json=order("ab"), headers=auth(world.admin))
    assert short.status_code == 400
    assert short.json()["positions"][0]["answers"][0]["answer"] == [
        "Ensure this field has at least 3 characters."
    ]
    long = await client.post(h.url(world), json=order("abcdef"), headers=auth(world.admin))
    assert long.json()["positions"][0]["answers"][0]["answer"] == [
        "Ensure this field has no more than 5 characters."
    ]
    ok = await client.post(h.url(world), json=order("abc"), headers=auth(world.admin))
    assert ok.status_code == 201, ok.text
    position = ok.json()["positions"][0]["id"]
    patched = await client.patch(
        h.url(world, f"orderpositions/{position}/"),
        json={"answers": [{"question": qid, "answer": "x"}]},
        headers=auth(world.admin),
    )
    assert patched.status_code == 400
