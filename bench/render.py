"""Ticket rendering: 1,000 tickets with a one-page background into one PDF, and single tickets.

1. Batch: a ``tickets.render_batch`` job of ``--tickets`` parts (positions of 250 orders,
   attendee names in Latin, Cyrillic, Greek and CJK script), drawn with a layout of ten elements
   (texts, a QR code) over a one-page background PDF (vector art, text and a photo-like image).
   Timed from the job's claim to its file being stored, as a worker runs it; reported: seconds,
   tickets/s, the file size against the budget (2x the background plus 20 KB a ticket) and the
   process's peak RSS (``ru_maxrss``, before and after). CPU time of this process is
   reported beside wall time: on a shared machine the wall time also counts other work.
2. Single: ``--single`` ``tickets.render`` jobs of one position each, as a ticket download
   queues them (load, fingerprint, draw, store, job bookkeeping); p50 and p99 of each job's run.
Targets (issue 15): 1,000 tickets < 10 s and the file within the budget; one ticket < 150 ms p50.
Run: .venv/bin/python bench/render.py [--tickets 1000] [--single 50] [--sqlite]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import io
import json
import random
import resource
import secrets
import statistics
import sys
import tempfile
import time
import uuid
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import insert

from bench.common import admit, fresh_pg_database

NAMES = ["Ada Lovelace", "Дмитрий Шостакович", "Ζωή Παπαδοπούλου", "山田太郎", "김민준"]
LAYOUT = [
    {"type": "textarea", "left": 15, "bottom": 262, "width": 180, "content": "event_name",
     "fontsize": 22, "bold": True},
    {"type": "textarea", "left": 15, "bottom": 254, "width": 120, "content": "event_begin",
     "fontsize": 12},
    {"type": "textarea", "left": 15, "bottom": 248, "width": 110, "content": "event_location",
     "fontsize": 11, "downward": True},
    {"type": "textarea", "left": 15, "bottom": 220, "width": 110, "content": "attendee_name",
     "fontsize": 18, "bold": True},
    {"type": "textarea", "left": 15, "bottom": 211, "width": 110, "content": "itemvar",
     "fontsize": 13},
    {"type": "textarea", "left": 15, "bottom": 204, "width": 110, "content": "price",
     "fontsize": 12, "align": "right"},
    {"type": "textarea", "left": 15, "bottom": 192, "width": 110, "content": "other",
     "text": "Order {order}-{positionid}", "fontsize": 11, "color": [180, 0, 0, 1]},
    {"type": "barcodearea", "left": 135, "bottom": 188, "size": 60},
    {"type": "textarea", "left": 135, "bottom": 183, "width": 60, "content": "secret",
     "fontsize": 7, "align": "center", "fontfamily": "DejaVu Sans Mono"},
    {"type": "poweredby", "left": 160, "bottom": 8, "size": 35},
]  # fmt: skip


def background_pdf() -> bytes:
    """A one-page A4 background of about 100 KB: shapes, text and a noisy image."""
    from PIL import Image
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    shuffle = random.Random(15)
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    for _ in range(300):
        pdf.setFillColorRGB(shuffle.random(), shuffle.random(), shuffle.random())
        pdf.circle(shuffle.random() * A4[0], shuffle.random() * A4[1], shuffle.random() * 25, 1, 0)
    pdf.setFont("Helvetica-Bold", 28)
    pdf.drawString(40, 790, "SUMMIT 2030")
    photo = io.BytesIO()
    Image.effect_noise((220, 160), 60).convert("RGB").save(photo, "PNG")
    photo.seek(0)
    pdf.drawImage(ImageReader(photo), 330, 40, 220, 160)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


async def seed(db, store, tickets: int) -> dict:
    from admit.auth.credentials import generate_token, hash_token
    from admit.models import (
        Event,
        Item,
        Order,
        OrderPosition,
        Organizer,
        Team,
        TeamAPIToken,
        TicketLayout,
        UploadedFile,
    )

    background = background_pdf()
    key = f"uploads/bench/{uuid.uuid4().hex}"
    async with store.writer(key) as out:
        out.write(background)
    now = dt.datetime.now(dt.UTC)
    async with db.sessionmaker() as session:
        org = Organizer(slug="bench", name="Bench Org", plugins=[])
        session.add(org)
        await session.flush()
        event = Event(
            organizer_id=org.id,
            slug="summit",
            name={"en": "Summit 2030"},
            date_from=dt.datetime(2030, 5, 1, 9, tzinfo=dt.UTC),
            location={"en": "Main hall, Example Street 1"},
            timezone="Europe/Berlin",
        )
        item = None
        session.add(event)
        await session.flush()
        item = Item(
            event_id=event.id, name={"en": "Conference ticket"}, default_price=Decimal("99")
        )
        team = Team(
            organizer_id=org.id,
            name="Bench",
            all_events=True,
            all_event_permissions=False,
            limit_event_permissions=["event.orders:read"],
            all_organizer_permissions=False,
            limit_organizer_permissions=[],
        )
        session.add_all([item, team])
        await session.flush()
        token = TeamAPIToken(team_id=team.id, name="bench", token_hash=hash_token(generate_token()))
        upload = UploadedFile(
            uuid=uuid.uuid4().hex, owner_kind="token", owner_id=0, filename="background.pdf",
            content_type="application/pdf", size=len(background), key=key, created=now,
        )  # fmt: skip
        session.add_all([token, upload])
        await session.flush()
        session.add(
            TicketLayout(
                event_id=event.id, name="Bench", default=True, layout=LAYOUT,
                background_id=upload.id,
            )
        )  # fmt: skip
        orders = max(1, tickets // 4)
        order_ids = (
            await session.execute(
                insert(Order).returning(Order.id),
                [
                    {"event_id": event.id, "code": f"B{n:05d}", "status": "p",
                     "secret": secrets.token_hex(16), "expires": now, "total": Decimal("396"),
                     "email": f"buyer{n}@example.org"}
                    for n in range(orders)
                ],
            )
        ).scalars().all()  # fmt: skip
        position_ids = (
            await session.execute(
                insert(OrderPosition).returning(OrderPosition.id),
                [
                    {"order_id": order_ids[n % orders], "event_id": event.id,
                     "positionid": n // orders + 1, "item_id": item.id, "price": Decimal("99"),
                     "secret": secrets.token_hex(16), "web_secret": secrets.token_hex(16),
                     "pseudonymization_id": secrets.token_hex(5).upper(),
                     "attendee_name_parts": {"_legacy": f"{NAMES[n % len(NAMES)]} {n}"},
                     "attendee_name_cached": f"{NAMES[n % len(NAMES)]} {n}"}
                    for n in range(tickets)
                ],
            )
        ).scalars().all()  # fmt: skip
        await session.commit()
        return {
            "organizer_id": org.id,
            "event_id": event.id,
            "owner": ("token", token.id),
            "positions": list(position_ids),
            "background_bytes": len(background),
        }


async def run(url: str, data_dir: str, tickets: int, single: int) -> dict:
    from admit.config import Settings
    from admit.db import create_database
    from admit.jobs.queue import enqueue
    from admit.jobs.runtime import Background
    from admit.kit.http.transaction import commit_and_notify
    from admit.models import Job
    from admit.tickets.tasks import BATCH_KIND, DOWNLOAD_KIND

    settings = Settings(database_url=url, data_dir=Path(data_dir))
    db = create_database(url, pool_size=4)
    parts = Background(settings, db)  # embedded engine, not serving: the bench runs jobs itself
    engine = parts.engine
    world = await seed(db, parts.store, tickets)

    async def job(kind: str, job_input: dict) -> int:
        async with db.sessionmaker() as session:
            job_id, _ = await enqueue(
                session, kind, job_input, organizer_id=world["organizer_id"],
                event_id=world["event_id"], owner=world["owner"], hand_over=False,
            )  # fmt: skip
            await commit_and_notify(session)
        return job_id

    async def row(job_id: int) -> Job:
        async with db.sessionmaker() as session:
            return await session.get(Job, job_id)

    # Warm-up: fonts registered, modules imported, as in a worker that has run a job before.
    warm = await job(DOWNLOAD_KIND, {"target": "warm", "positions": world["positions"][:1]})
    await engine.run(warm)

    batch_parts = [{"orderposition": p} for p in world["positions"]]
    batch_id = await job(BATCH_KIND, {"parts": batch_parts, "filename": "bench.pdf"})
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started, cpu = time.perf_counter(), time.process_time()
    await engine.run(batch_id)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    done = await row(batch_id)
    assert done.status == "finished", done.message
    budget = 2 * world["background_bytes"] + 20_000 * tickets

    times, cpu_times = [], []
    for number in range(single):
        position = world["positions"][number % len(world["positions"])]
        job_id = await job(
            DOWNLOAD_KIND, {"target": f"position:{position}", "positions": [position]}
        )
        started, cpu = time.perf_counter(), time.process_time()
        await engine.run(job_id)
        times.append(time.perf_counter() - started)
        cpu_times.append(time.process_time() - cpu)
        assert (await row(job_id)).status == "finished"
    await db.dispose()
    times.sort()
    p50 = statistics.median(times) * 1000
    return {
        "tickets": tickets,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu_seconds, 2),
        "tickets_per_s": round(tickets / seconds, 1),
        "file_bytes": done.result_size,
        "background_bytes": world["background_bytes"],
        "size_budget_bytes": budget,
        "rss_before_mb": round(rss_before, 1),
        "peak_rss_mb": round(rss_peak, 1),
        "single_runs": single,
        "single_p50_ms": round(p50, 1),
        "single_cpu_p50_ms": round(statistics.median(cpu_times) * 1000, 1),
        "single_p99_ms": round(times[min(len(times) - 1, int(0.99 * len(times)))] * 1000, 1),
        "target_met": seconds < 10 and done.result_size < budget and p50 < 150,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tickets", type=int, default=1000)
    parser.add_argument("--single", type=int, default=50)
    parser.add_argument("--sqlite", action="store_true", help="SQLite instead of PostgreSQL")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="admit-bench-render-")
    if args.sqlite:
        url = f"sqlite+aiosqlite:///{data_dir}/bench.sqlite3"
    else:
        url = fresh_pg_database("admit_bench_render")
    admit({"ADMIT_DATABASE_URL": url, "ADMIT_DATA_DIR": data_dir}, "migrate")
    result = asyncio.run(run(url, data_dir, args.tickets, args.single))
    database = "sqlite" if args.sqlite else "postgresql"
    print(json.dumps({"benchmark": "render", "database": database, **result}))


if __name__ == "__main__":
    main()
