"""The variables a ticket prints, and the fixed number of queries that load them."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import insert, update

from admit.models import (
    Answer,
    Event,
    ItemVariation,
    Organizer,
    Question,
    QuestionOption,
    Seat,
    SubEvent,
    answer_options,
)
from admit.tickets.documents import Part, fingerprint, plan
from admit.tickets.loading import load_batch
from admit.tickets.selection import BUILTIN_LAYOUT
from admit.tickets.values import ticket_values
from admit.tickets.variables import TEXT_VARIABLES
from tests.checkin.helpers import addon
from tests.factories import World
from tests.tickets import helpers as h


async def _event(factory, world: World, **values) -> Event:
    async with factory.sessionmaker() as session:
        await session.execute(update(Event).where(Event.id == world.event.id).values(**values))
        await session.commit()
        return await session.get(Event, world.event.id)


async def _values(factory, event: Event, position_id: int) -> dict[str, str]:
    async with factory.sessionmaker() as session:
        batch = await load_batch(session, event, [position_id])
    return ticket_values(batch, batch.positions[position_id])


async def test_every_variable_has_a_value(client, world: World, factory):
    event = await _event(
        factory,
        world,
        name={"en": "Summit", "de": "Gipfel"},
        timezone="Europe/Berlin",
        date_from=dt.datetime(2030, 5, 1, 8, 30, tzinfo=dt.UTC),
        date_to=dt.datetime(2030, 5, 2, 16, 0, tzinfo=dt.UTC),
        date_admission=dt.datetime(2030, 5, 1, 7, 45, tzinfo=dt.UTC),
        location={"en": "Main hall", "de": "Große Halle"},
    )
    item = await h.ticket_item(factory, event, "Ticket")
    async with factory.sessionmaker() as session:
        session.add(item)
        item.name = {"en": "Ticket", "de": "Eintritt"}
        variation = ItemVariation(item_id=item.id, value={"en": "Red", "de": "Rot"})
        session.add(variation)
        await session.commit()
    order, (position,) = await h.order(
        factory, event, item, ["Ada Lovelace"], locale="de",
        position={"variation_id": variation.id, "company": "ACME", "street": "Main St 1",
                  "zipcode": "12345", "city": "Town", "country": "DE",
                  "attendee_email": "ada@example.org"},
    )  # fmt: skip
    values = await _values(factory, event, position.id)
    assert set(TEXT_VARIABLES) <= set(values)
    assert values["event_name"] == "Gipfel"
    assert values["event_date"] == "2030-05-01"
    assert values["event_date_range"] == "2030-05-01 – 2030-05-02"
    assert values["event_begin"] == "2030-05-01 10:30"  # Berlin, summer time
    assert values["event_begin_time"] == "10:30"
    assert values["event_end"] == "2030-05-02 18:00"
    assert values["event_admission"] == "2030-05-01 09:45"
    assert values["event_location"] == "Große Halle"
    assert values["organizer"] == world.org.name
    assert values["order"] == order.code
    assert values["order_email"] == "buyer@example.org"
    assert values["order_total"] == "EUR 23.00"
    assert values["positionid"] == "1"
    assert values["attendee_name"] == "Ada Lovelace"
    assert values["attendee_email"] == "ada@example.org"
    assert values["attendee_company"] == "ACME"
    assert values["attendee_address"] == "Main St 1\n12345 Town\nDE"
    assert values["item"] == "Eintritt"
    assert values["variation"] == "Rot"
    assert values["itemvar"] == "Eintritt – Rot"
    assert values["price"] == "EUR 23.00"
    assert values["seat"] == ""
    assert values["addons"] == ""
    assert values["secret"] == position.secret
    assert values["pseudonymization_id"] == position.pseudonymization_id


async def test_series_dates_seats_addons_answers_and_currency_places(client, world: World, factory):
    event = await _event(factory, world, currency="JPY", has_subevents=True)
    async with factory.sessionmaker() as session:
        date = SubEvent(
            event_id=event.id,
            name={"en": "Matinee"},
            date_from=dt.datetime(2031, 1, 2, 14, tzinfo=dt.UTC),
            location={"en": "Small stage"},
        )
        seat = Seat(
            event_id=event.id, zone_name="Stalls", row_name="3", seat_number="7", seat_guid="s1"
        )
        session.add_all([date, seat])
        await session.commit()
    item = await h.ticket_item(factory, event, "Ticket", default_price=Decimal("500"))
    extra = await h.ticket_item(factory, event, "Parking")
    order, (main,) = await h.order(
        factory, event, item, ["Ada"], position={"subevent_id": date.id, "seat_id": seat.id}
    )
    child = await addon(factory, order, main, extra, 2)
    async with factory.sessionmaker() as session:
        choice = Question(event_id=event.id, question={"en": "Meal"}, type="C", identifier="meal")
        yes = Question(event_id=event.id, question={"en": "VIP"}, type="B", identifier="vip")
        text = Question(event_id=event.id, question={"en": "Note"}, type="S", identifier="note")
        session.add_all([choice, yes, text])
        await session.flush()
        veg = QuestionOption(question_id=choice.id, identifier="V", answer={"en": "Vegan"})
        session.add(veg)
        await session.flush()
        meal = Answer(orderposition_id=main.id, question_id=choice.id, answer="Vegan")
        session.add_all([
            meal,
            Answer(orderposition_id=main.id, question_id=yes.id, answer="True"),
            Answer(orderposition_id=main.id, question_id=text.id, answer="Window seat"),
        ])  # fmt: skip
        await session.flush()
        await session.execute(insert(answer_options).values(answer_id=meal.id, option_id=veg.id))
        await session.commit()
    values = await _values(factory, event, main.id)
    assert values["event_name"] == "Matinee"
    assert values["event_begin"] == "2031-01-02 14:00"
    assert values["event_location"] == "Small stage"
    assert values["seat"] == "Stalls, Row 3, Seat 7"
    assert values["addons"] == "Parking"
    assert values["price"] == "JPY 23"  # no minor units
    assert values["question_meal"] == "Vegan"
    assert values["question_vip"] == "Yes"
    assert values["question_note"] == "Window seat"
    # An add-on without a name of its own prints its main position's attendee.
    assert (await _values(factory, event, child.id))["attendee_name"] == "Ada"


async def test_a_batch_loads_in_a_fixed_number_of_queries(
    client, world: World, factory, count_queries
):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    extra = await h.ticket_item(factory, world.event, "Parking")
    await h.layout(app, world.event, BUILTIN_LAYOUT, default=True, background=h.background_pdf())
    counts = []
    for size in (1, 30):
        order, positions = await h.order(factory, world.event, item, [f"G{n}" for n in range(size)])
        for number, position in enumerate(positions):
            await addon(factory, order, position, extra, size + number + 1)
        async with factory.sessionmaker() as session:
            event = await session.get(Event, world.event.id)
            with count_queries() as queries:
                batch = await load_batch(session, event, [p.id for p in positions])
                pages = plan(batch, [Part(p.id) for p in positions])
                fingerprint(batch, pages)
        assert len(batch.positions) == size
        counts.append(queries.count)
    assert counts[0] == counts[1], counts
    assert counts[1] <= 12


async def test_the_fingerprint_follows_what_is_printed(client, world: World, factory):
    app = client._transport.app
    item = await h.ticket_item(factory, world.event)
    _, (position,) = await h.order(factory, world.event, item, ["Ada"])

    async def current() -> str:
        async with factory.sessionmaker() as session:
            event = await session.get(Event, world.event.id)
            batch = await load_batch(session, event, [position.id])
            return fingerprint(batch, plan(batch, [Part(position.id)]))

    first = await current()
    assert await current() == first
    async with factory.sessionmaker() as session:
        await session.execute(
            update(Organizer).where(Organizer.id == world.org.id).values(name="New")
        )
        await session.commit()
    second = await current()
    assert second != first
    await h.layout(app, world.event, h.TEXT_LAYOUT, default=True)
    assert await current() != second
