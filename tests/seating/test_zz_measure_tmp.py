import time
from sqlalchemy import select, text
from sqlalchemy.dialects import postgresql
from admit.models import Seat
from admit.seating.holders import available
from admit.db import utcnow
from tests.factories import auth
from tests.seating import helpers as h


async def test_measure(client, world, factory, clean_app):
    if clean_app.state.db.is_sqlite:
        return
    rows = {str(r): [f"{n}:Stalls" for n in range(1, 101)] for r in range(1, 101)}
    ticket = await h.ticket(factory, world.event, quota=None)
    await h.seated_event(factory, world.event, {"Stalls": ticket.id}, h.layout(rows))
    for i in range(1, 51):
        r = await h.order(client, world, [{"item": ticket.id, "seat": f"{i}-{i}"}])
    q = select(Seat.id).where(Seat.event_id==world.event.id, Seat.subevent_id.is_(None)).where(available(utcnow(), world.event.id)).order_by(Seat.sorting_rank, Seat.id).limit(50).offset(2000)
    sql = str(q.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))
    async with clean_app.state.db.engine.connect() as conn:
        for line in (await conn.execute(text("EXPLAIN ANALYZE " + sql))).scalars():
            print(line)
    t = time.perf_counter()
    for i in range(20):
        r = await client.get(h.seats_url(world), params={"is_available": "true", "page": str(i + 30)}, headers=auth(world.admin))
    print("list available page ms", round((time.perf_counter() - t) / 20 * 1000, 2))
    t = time.perf_counter()
    for i in range(20):
        r = await client.get(h.seats_url(world), params={"page": str(i + 30)}, headers=auth(world.admin))
    print("list page ms", round((time.perf_counter() - t) / 20 * 1000, 2))
