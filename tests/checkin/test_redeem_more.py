"""Redeem beyond the basics: check-in questions, rules, add-on matching, revoked secrets,
expand, and check-ins showing on orders."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from admit.models import Answer, Checkin
from tests.checkin import helpers as h
from tests.factories import World, auth


async def test_questions_flow(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    size = await h.question(factory, world.event, [item], "C", ["S", "M", "L"], required=True)
    note = await h.question(factory, world.event, [item], "S", text="Note?", required=False)
    await h.question(factory, world.event, [item], "S", ask_during_checkin=False)
    clist = await h.checkin_list(factory, world.event)
    _, (pos,) = await h.order(factory, world.event, item)

    first = await h.redeem(client, world, pos.secret, [clist.id], nonce="q1")
    assert first.status_code == 400, first.text
    body = first.json()
    assert body["status"] == "incomplete"
    assert [q["id"] for q in body["questions"]] == [size.id, note.id]
    assert [o["answer"] for o in body["questions"][0]["options"]] == [
        {"en": "S"},
        {"en": "M"},
        {"en": "L"},
    ]
    assert body["questions"][0]["ask_during_checkin"] is True

    # Not supported by the scanner: questions are ignored.
    ignored = await h.redeem(client, world, pos.secret, [clist.id], questions_supported=False)
    assert ignored.status_code == 201
    # Exits never ask.
    assert (await h.redeem(client, world, pos.secret, [clist.id], type="exit")).status_code == 201

    option_m = body["questions"][0]["options"][1]["id"]
    # An invalid answer is not stored: still incomplete.
    wrong = await h.redeem(client, world, pos.secret, [clist.id], answers={str(size.id): "999"})
    assert wrong.status_code == 400 and [q["id"] for q in wrong.json()["questions"]] == [
        size.id,
        note.id,
    ]
    # The required one answered, the optional one skipped with an empty answer.
    done = await h.redeem(
        client,
        world,
        pos.secret,
        [clist.id],
        nonce="q1",
        answers={str(size.id): str(option_m), str(note.id): ""},
    )
    assert done.status_code == 201, done.text
    answers = done.json()["position"]["answers"]
    assert [(a["question"], a["options"]) for a in answers] == [(size.id, [option_m])]
    async with factory.sessionmaker() as s:
        stored = list(await s.scalars(select(Answer).where(Answer.orderposition_id == pos.id)))
    assert [a.answer for a in stored] == ["M"]


async def test_rules_refuse_with_explanation(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    rules = {"<": [{"var": "entries_number"}, 2]}
    clist = await h.checkin_list(factory, world.event, allow_multiple_entries=True, rules=rules)
    _, (pos,) = await h.order(factory, world.event, item)
    for _ in range(2):
        assert (await h.redeem(client, world, pos.secret, [clist.id])).status_code == 201
    third = await h.redeem(client, world, pos.secret, [clist.id])
    assert third.status_code == 200
    assert third.json()["reason"] == "rules"
    assert third.json()["reason_explanation"] == "Maximum number of entries exceeded"
    # rules are not applied to exits, nor to forced uploads
    assert (await h.redeem(client, world, pos.secret, [clist.id], type="exit")).status_code == 201
    assert (await h.redeem(client, world, pos.secret, [clist.id], force=True)).status_code == 201
    async with factory.sessionmaker() as s:
        failed = (await s.scalars(select(Checkin).where(Checkin.successful.is_(False)))).one()
    assert failed.error_explanation == "Maximum number of entries exceeded"


async def test_time_rule_uses_the_scan_datetime(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    rules = {"isAfter": [{"var": "now"}, {"buildTime": ["date_admission"]}, 30]}
    clist = await h.checkin_list(factory, world.event, rules=rules)
    _, (pos,) = await h.order(factory, world.event, item)
    early = await h.redeem(client, world, pos.secret, [clist.id], datetime="2030-05-01T09:00:00Z")
    assert early.json()["reason"] == "rules"
    assert early.json()["reason_explanation"] == "Only allowed after 09:30"
    on_time = await h.redeem(client, world, pos.secret, [clist.id], datetime="2030-05-01T09:45:00Z")
    assert on_time.status_code == 201


async def test_addon_match(client, world: World, factory):
    ticket = await h.ticket(factory, world.event)
    workshop = await h.ticket(factory, world.event, "Workshop")
    dinner = await h.ticket(factory, world.event, "Dinner")
    clist = await h.checkin_list(factory, world.event, items=[workshop], addon_match=True)
    plain = await h.checkin_list(factory, world.event, "Plain", items=[workshop])
    order, (main,) = await h.order(factory, world.event, ticket)
    addon = await h.addon(factory, order, main, workshop, 2)
    # Scanning the main ticket checks its workshop add-on in.
    response = await h.redeem(client, world, main.secret, [clist.id])
    assert response.status_code == 201, response.text
    assert response.json()["position"]["id"] == addon.id
    assert response.json()["position"]["attendee_name"] == "Guest 1"  # from the parent
    # Without addon_match the main ticket is the wrong product.
    assert (await h.redeem(client, world, main.secret, [plain.id])).json()["reason"] == "product"
    # Two add-ons on the list: ambiguous.
    await h.addon(factory, order, main, workshop, 3)
    ambiguous = await h.redeem(client, world, main.secret, [clist.id])
    assert ambiguous.status_code == 200 and ambiguous.json()["reason"] == "ambiguous"
    del dinner


async def test_revoked_secret(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event)
    order, (pos,) = await h.order(factory, world.event, item)
    old = pos.secret
    response = await client.post(
        h.event_url(world, f"orders/{order.code}/regenerate_secrets/"),
        headers=auth(world.admin),
    )
    assert response.status_code == 200, response.text
    revoked = await h.redeem(client, world, old, [clist.id])
    assert revoked.status_code == 200 and revoked.json()["reason"] == "revoked"
    assert revoked.json()["position"]["id"] == pos.id
    forced = await h.redeem(client, world, old, [clist.id], force=True)
    assert forced.status_code == 201
    new_secret = forced.json()["position"]["secret"]
    assert new_secret != old
    assert (await h.redeem(client, world, new_secret, [clist.id])).json()["reason"] == (
        "already_redeemed"
    )


async def test_expand_and_order_rendering(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    var = await h.variation(factory, item, "Early")
    clist = await h.checkin_list(factory, world.event)
    order, (pos,) = await h.order(factory, world.event, item, variation=var)
    response = await client.post(
        h.rpc_url(world, "redeem") + "?expand=item&expand=variation",
        json={"secret": pos.secret, "lists": [clist.id]},
        headers=auth(world.admin),
    )
    assert response.status_code == 201, response.text
    position = response.json()["position"]
    assert position["item"]["id"] == item.id and position["variation"]["id"] == var.id
    bad = await client.post(
        h.rpc_url(world, "redeem") + "?expand=secret",
        json={"secret": pos.secret, "lists": [clist.id]},
        headers=auth(world.admin),
    )
    assert bad.status_code == 400

    detail = await client.get(
        h.event_url(world, f"orders/{order.code}/"), headers=auth(world.admin)
    )
    (checkin,) = detail.json()["positions"][0]["checkins"]
    assert checkin["list"] == clist.id and checkin["type"] == "entry"
    assert checkin["auto_checked_in"] is False
    base = h.event_url(world, "orderpositions/")
    with_checkin = await client.get(base + "?has_checkin=true", headers=auth(world.admin))
    assert [p["id"] for p in with_checkin.json()["results"]] == [pos.id]
    without = await client.get(base + "?has_checkin=false", headers=auth(world.admin))
    assert without.json()["count"] == 0


async def test_exit_all_at_is_applied_lazily(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    past = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    clist = await h.checkin_list(factory, world.event, exit_all_at=past)
    _, (pos,) = await h.order(factory, world.event, item)
    earlier = (past - dt.timedelta(hours=1)).isoformat()
    assert (
        await h.redeem(client, world, pos.secret, [clist.id], datetime=earlier)
    ).status_code == 201
    # The job has not run yet, but everyone inside at exit_all_at counts as gone.
    assert (await h.redeem(client, world, pos.secret, [clist.id])).status_code == 201


async def test_questions_are_per_ticket(client, world: World, factory):
    item = await h.ticket(factory, world.event)
    question = await h.question(factory, world.event, [item], "S", required=True)
    clist = await h.checkin_list(factory, world.event)
    _, (first, second) = await h.order(factory, world.event, item, n=2)
    answered = await h.redeem(
        client, world, first.secret, [clist.id], answers={str(question.id): "Hello"}
    )
    assert answered.status_code == 201, answered.text
    # The other ticket's answer does not answer this one's question.
    response = await h.redeem(client, world, second.secret, [clist.id])
    assert response.status_code == 400 and response.json()["status"] == "incomplete"


async def test_scanning_needs_permission_on_the_lists_event(client, world: World, factory):
    elsewhere = await factory.event(world.org, "elsewhere")
    item = await h.ticket(factory, world.event)
    other_item = await h.ticket(factory, elsewhere)
    here = await h.checkin_list(factory, world.event)
    there = await h.checkin_list(factory, elsewhere)
    team = await factory.team(
        world.org,
        all_events=False,
        events=[world.event],
        event_permissions=["event.orders:checkin"],
    )
    scanner = await factory.token(team)
    _, (pos,) = await h.order(factory, world.event, item)
    _, (other,) = await h.order(factory, elsewhere, other_item)
    refused = await h.redeem(client, world, other.secret, [there.id], token=scanner)
    assert refused.status_code == 400 and "lists" in refused.json()
    assert (await h.redeem(client, world, pos.secret, [here.id], token=scanner)).status_code == 201
    # A team that may only read orders cannot scan at all.
    reader = await factory.token(
        await factory.team(world.org, event_permissions=["event.orders:read"])
    )
    assert (await h.redeem(client, world, pos.secret, [here.id], token=reader)).status_code == 403
    async with factory.sessionmaker() as s:
        rows = list(await s.scalars(select(Checkin)))
    assert [(r.position_id, r.successful) for r in rows] == [(pos.id, True)]


async def test_general_path_admits_what_the_fast_path_leaves(client, world: World, factory):
    """Pending orders that are valid, second entries, exits: admitted without the one-statement
    first-entry path."""
    item = await h.ticket(factory, world.event)
    clist = await h.checkin_list(factory, world.event, allow_multiple_entries=True)
    _, (pos,) = await h.order(factory, world.event, item, status="n", valid_if_pending=True)
    for kind in ("entry", "entry", "exit"):
        response = await h.redeem(client, world, pos.secret, [clist.id], type=kind)
        assert response.status_code == 201, response.text
    assert [c["type"] for c in response.json()["position"]["checkins"]] == [
        "entry",
        "entry",
        "exit",
    ]
