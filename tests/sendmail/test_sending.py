"""Sending over a simulated clock: the periodic task called at chosen moments mails exactly
the right recipients, once, in their language, per date of a series."""

from __future__ import annotations

import asyncio
import datetime as dt

from admit.models import Checkin
from admit.sendmail.schedule import LATE_LIMIT
from tests.checkin import helpers as h
from tests.factories import World, auth
from tests.sendmail.helpers import (
    UTC,
    enable_plugin,
    mails,
    move_position,
    order,
    recipients,
    records,
    rules_url,
    run,
    subevent,
)

# The event starts 2030-05-01 10:00 UTC (12:00 in Berlin); "1 day before at 09:00" in
# Berlin is 2030-04-30 07:00 UTC.
DUE = dt.datetime(2030, 4, 30, 7, 0, tzinfo=UTC)
REMINDER = {
    "subject": {"en": "Reminder: {event} ({order})", "de": "Erinnerung: {event} ({order})"},
    "template": {"en": "Hello {name},\n\nsee you on {date}.\n{url}\n{organizer} {order_email}"},
    "date_is_absolute": False,
    "send_offset_days": 1,
    "send_offset_time": "09:00",
}


async def _rule(client, world: World, **body) -> dict:
    response = await client.post(
        rules_url(world), json={**REMINDER, **body}, headers=auth(world.admin)
    )
    assert response.status_code == 201, response.text
    return response.json()


async def _setup(factory, world: World):
    await enable_plugin(factory, world.event, timezone="Europe/Berlin")
    return await h.ticket(factory, world.event)


async def test_relative_rule_mails_the_right_orders_once(client, clean_app, world, factory):
    ticket = await _setup(factory, world)
    paid, _ = await order(factory, world.event, ticket, email="paid@example.org")
    await order(factory, world.event, ticket, status="n", email="pending@example.org")
    await order(
        factory, world.event, ticket, status="n", valid_if_pending=True, email="valid@example.org"
    )
    await order(factory, world.event, ticket, status="c", email="canceled@example.org")
    await order(factory, world.event, ticket, email=None)
    rule = await _rule(client, world)

    assert await run(clean_app, DUE - dt.timedelta(seconds=1)) == 0
    assert await mails(clean_app) == []
    assert await run(clean_app, DUE) == 2
    sent = await mails(clean_app)
    assert recipients(sent) == ["paid@example.org", "valid@example.org"]
    first = next(m for m in sent if m.to == ["paid@example.org"])
    assert first.subject == f"Reminder: Summit ({paid.code})"
    assert first.body == (
        "Hello Guest 1,\n\nsee you on 2030-05-01 12:00 CEST.\n"
        f"https://tickets.example/acme/summit/order/{paid.code}/{paid.secret}/\n"
        "Acme paid@example.org"
    )
    assert "Hello Guest 1,<br>" not in first.html and "<p>Hello Guest 1,</p>" in first.html
    assert first.job_id is not None and first.event_id == world.event.id
    assert {r.mail_id for r in await records(clean_app)} == {m.id for m in sent}

    # Again, and as a second scheduler would: nothing twice.
    assert await run(clean_app, DUE) == 0
    assert await run(clean_app, DUE + dt.timedelta(minutes=5)) == 0
    # Changing the rule after it sent does not send again to those mailed.
    url = rules_url(world, f"{rule['id']}/")
    change = {"subject": "Changed {order}", "send_offset_time": "08:00", "include_pending": True}
    assert (await client.patch(url, json=change, headers=auth(world.admin))).status_code == 200
    assert await run(clean_app, DUE + dt.timedelta(minutes=10)) == 1  # the pending order only
    assert recipients(await mails(clean_app))[-1] != "paid@example.org"
    assert len(await mails(clean_app)) == 3

    # An order paid while the rule is due is mailed; one after the window is not.
    await order(factory, world.event, ticket, email="late@example.org")
    now_due = DUE - dt.timedelta(hours=1)  # the rule sends at 08:00 now
    assert await run(clean_app, now_due + LATE_LIMIT - dt.timedelta(minutes=1)) == 1
    await order(factory, world.event, ticket, email="later@example.org")
    assert await run(clean_app, now_due + LATE_LIMIT) == 0
    assert "later@example.org" not in recipients(await mails(clean_app))


async def test_two_schedulers_at_once_send_each_mail_once(client, clean_app, world, factory):
    ticket = await _setup(factory, world)
    for i in range(5):
        await order(factory, world.event, ticket, email=f"fan{i}@example.org")
    await _rule(client, world)
    counts = await asyncio.gather(run(clean_app, DUE), run(clean_app, DUE))
    assert sum(counts) == 5
    assert len(await mails(clean_app)) == 5 and len(await records(clean_app)) == 5


async def test_absolute_rule_and_a_rule_created_too_late(client, clean_app, world, factory):
    ticket = await _setup(factory, world)
    await order(factory, world.event, ticket, email="a@example.org")
    when = dt.datetime(2030, 3, 1, 12, tzinfo=UTC)
    await _rule(client, world, date_is_absolute=True, send_date=when.isoformat())
    assert await run(clean_app, when - dt.timedelta(minutes=1)) == 0
    assert await run(clean_app, when + dt.timedelta(minutes=1)) == 1
    # A second rule whose time passed long ago sends nothing.
    await _rule(client, world, date_is_absolute=True, send_date="2030-01-01T00:00:00Z")
    assert await run(clean_app, when + dt.timedelta(minutes=2)) == 0
    assert len(await mails(clean_app)) == 1


async def test_disabled_rule_or_plugin_sends_nothing(client, clean_app, world, factory):
    ticket = await _setup(factory, world)
    await order(factory, world.event, ticket, email="a@example.org")
    await _rule(client, world, enabled=False)
    assert await run(clean_app, DUE) == 0
    await _rule(client, world)
    await enable_plugin(factory, world.event, "badges")
    assert await run(clean_app, DUE) == 0
    assert await mails(clean_app) == []


async def test_language_of_the_order(client, clean_app, world, factory):
    ticket = await _setup(factory, world)
    await order(factory, world.event, ticket, email="de@example.org", locale="de-informal")
    await order(factory, world.event, ticket, email="fr@example.org", locale="fr")
    await _rule(client, world)
    await run(clean_app, DUE)
    subjects = {m.to[0]: m.subject.split(":")[0] for m in await mails(clean_app)}
    assert subjects == {"de@example.org": "Erinnerung", "fr@example.org": "Reminder"}


async def test_attendees_products_and_check_in_state(client, clean_app, world, factory):
    ticket = await _setup(factory, world)
    other = await h.ticket(factory, world.event, "Workshop")
    placed, positions = await order(
        factory,
        world.event,
        ticket,
        n=2,
        email="buyer@example.org",
        position={"attendee_email": "guest@example.org"},
    )
    await order(
        factory, world.event, other, email="b2@example.org", position={"attendee_email": "w@x.org"}
    )
    await order(factory, world.event, ticket, email="c@example.org")  # no attendee address
    clist = await h.checkin_list(factory, world.event)
    async with factory.sessionmaker() as s:
        s.add(Checkin(event_id=world.event.id, list_id=clist.id, position_id=positions[0].id))
        await s.commit()
    await _rule(
        client,
        world,
        send_to="attendees",
        all_products=False,
        limit_products=[ticket.id],
        checked_in_status="no_checkin",
        subject="For {name}",
    )
    assert await run(clean_app, DUE) == 1
    [mail] = await mails(clean_app)
    assert mail.to == ["guest@example.org"] and mail.subject == "For Guest 2"
    [record] = await records(clean_app)
    assert (record.order_id, record.position_id) == (placed.id, positions[1].id)
    # the outbox names the order and ticket too: the order's back-office page lists it
    assert (mail.order_id, mail.position_id) == (placed.id, positions[1].id)


async def test_both_mails_order_and_other_attendees(client, clean_app, world, factory):
    ticket = await _setup(factory, world)
    _, positions = await order(factory, world.event, ticket, n=3, email="buyer@example.org")
    addresses = ["Buyer@example.org", "x@example.org", None]
    for position, address in zip(positions, addresses, strict=True):
        await move_position(factory, position.id, attendee_email=address)
    await _rule(client, world, send_to="both", subject="{name}")
    assert await run(clean_app, DUE) == 2
    sent = {m.to[0]: m.subject for m in await mails(clean_app)}
    assert sent == {"buyer@example.org": "Guest 1", "x@example.org": "Guest 2"}
    assert await run(clean_app, DUE) == 0


async def test_status_codes(client, clean_app, world, factory):
    ticket = await _setup(factory, world)
    kinds = {
        "p": {"status": "p"},
        "e": {"status": "e"},
        "c": {"status": "c"},
        "n__pending_approval": {"status": "n", "require_approval": True},
        "n__not_pending_approval_and_not_valid_if_pending": {"status": "n"},
        "n__valid_if_pending": {"status": "n", "valid_if_pending": True},
    }
    for code, kw in kinds.items():
        await order(factory, world.event, ticket, email=f"{code}@example.org", **kw)
    await order(
        factory,
        world.event,
        ticket,
        status="n",
        email="o@example.org",
        expires=DUE - dt.timedelta(days=1),
    )
    for code in [*kinds, "n__pending_overdue"]:
        await _rule(client, world, restrict_to_status=[code], subject=code)
    await run(clean_app, DUE)
    sent = sorted((m.subject, m.to[0]) for m in await mails(clean_app))
    pending = "n__not_pending_approval_and_not_valid_if_pending"
    assert sent == sorted(
        [(code, f"{code}@example.org") for code in kinds]
        + [(pending, "o@example.org"), ("n__pending_overdue", "o@example.org")]
    )


async def test_event_series_sends_per_date(client, clean_app, world, factory):
    ticket = await _setup(factory, world)
    await enable_plugin(factory, world.event, has_subevents=True, timezone="Europe/Berlin")
    first = await subevent(factory, world.event, dt.datetime(2030, 6, 1, 18, tzinfo=UTC))
    second = await subevent(factory, world.event, dt.datetime(2030, 6, 8, 18, tzinfo=UTC))
    await order(
        factory, world.event, ticket, email="one@example.org", position={"subevent_id": first.id}
    )
    _, positions = await order(
        factory, world.event, ticket, n=2, email="two@example.org",
        position={"subevent_id": first.id},
    )  # fmt: skip
    await order(
        factory, world.event, ticket, email="three@example.org",
        position={"subevent_id": second.id},
    )  # fmt: skip
    await move_position(factory, positions[1].id, subevent_id=second.id)  # its 2nd date
    await _rule(client, world, subject="{date}")
    # 1 day before, 09:00 Berlin (07:00 UTC)
    assert await run(clean_app, dt.datetime(2030, 5, 31, 7, tzinfo=UTC)) == 2
    assert await run(clean_app, dt.datetime(2030, 6, 2, 7, tzinfo=UTC)) == 0
    assert await run(clean_app, dt.datetime(2030, 6, 7, 7, tzinfo=UTC)) == 2
    sent = sorted((m.to[0], m.subject) for m in await mails(clean_app))
    assert sent == [
        ("one@example.org", "2030-06-01 20:00 CEST"),
        ("three@example.org", "2030-06-08 20:00 CEST"),
        ("two@example.org", "2030-06-01 20:00 CEST"),
        ("two@example.org", "2030-06-08 20:00 CEST"),
    ]
    assert await run(clean_app, dt.datetime(2030, 6, 7, 8, tzinfo=UTC)) == 0


async def test_many_recipients_go_in_batches_in_one_run(
    client, clean_app, world, factory, monkeypatch
):
    from admit.sendmail import recipients as module

    monkeypatch.setattr(module, "BATCH", 2)
    ticket = await _setup(factory, world)
    for i in range(5):
        await order(factory, world.event, ticket, email=f"fan{i}@example.org")
    await _rule(client, world)
    assert await run(clean_app, DUE) == 5
    assert len(await records(clean_app)) == 5
