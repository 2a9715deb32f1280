"""Invoice PDFs: ``--count`` invoices of three lines (names in several scripts) drawn as a
worker draws them (``admit.invoices.drawing.draw``: reportlab PDF, Factur-X XML made and
schema-checked, embedded with its PDF/A-3 metadata), in ``--processes`` processes.

Reported: wall seconds of the drawing (imports and fonts loaded before the clock starts, as in
a running worker), the CPU seconds of the processes beside it (on a shared machine the wall time
also counts other work; ``wall_s_if_each_process_had_a_core`` is the busiest process's CPU
time), CPU ms per invoice, and the load average before and after.
Target (issue 33): 1,000 invoice PDFs < 10 s on this machine kind (2 cores).
Run: .venv/bin/python bench/invoice_pdfs.py [--count 1000] [--processes 2] [--logo]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

NAMES = ["Ada Lovelace", "Дмитрий Шостакович", "山田太郎"]


def _invoice(number: int):
    from admit.models import Invoice, InvoiceLine

    invoice = Invoice(
        full_invoice_no=f"BENCH-{number:05d}", date=dt.date(2026, 11, 28), currency="EUR",
        is_cancellation=False, invoice_from_name="Acme Events GmbH", invoice_from="Am Markt 5",
        invoice_from_zipcode="04109", invoice_from_city="Leipzig", invoice_from_state="",
        invoice_from_country="DE", invoice_from_tax_id="231/123/45678",
        invoice_from_vat_id="DE999999999", invoice_to=f"{NAMES[number % 3]}\nHauptstr. 1",
        invoice_to_name=NAMES[number % 3], invoice_to_company="", invoice_to_street="Hauptstr. 1",
        invoice_to_city="Berlin", invoice_to_zipcode="10115", invoice_to_country="DE",
        invoice_to_vat_id="", introductory_text="Thank you for your order.", additional_text="",
        payment_provider_text="Please pay by 2026-12-12.", payment_provider_stamp=None,
        footer_text="Acme Events GmbH · Leipzig", reverse_charge=False,
        due_date=dt.date(2026, 12, 12), total=Decimal("248.70"), locale="en",
        internal_reference="",
    )  # fmt: skip
    prices = [("119.00", "19.00", "19.00"), ("119.00", "19.00", "19.00"), ("10.70", "0.70", "7.00")]
    invoice.lines = [
        InvoiceLine(
            position=i,
            description=f"Ticket {i}",
            gross_value=Decimal(g),
            tax_value=Decimal(t),
            tax_rate=Decimal(r),
            tax_name="VAT",
            tax_code="S/standard",
            attendee_name=NAMES[i - 1],
            event_date_from=dt.datetime(2027, 5, 1, 9, tzinfo=dt.UTC),
            event_location=None,
            fee_type=None,
        )
        for i, (g, t, r) in enumerate(prices, start=1)
    ]
    return invoice


def _logo() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGBA", (1200, 400), (20, 90, 200, 200)).save(out, format="PNG")
    return out.getvalue()


def _work(numbers: list[int], with_logo: bool) -> dict[str, float]:
    """Draws the invoices as the rendering job does (PDF/A-3 with the Factur-X XML embedded,
    the logo when asked); fonts, schemas and the logo are prepared once per process first."""
    from admit.invoices.drawing import draw, prepare_logo

    logo = prepare_logo(_logo()) if with_logo else None
    draw(_invoice(0), "WARM1", None, logo)
    cpu, size = time.process_time(), 0
    started = time.perf_counter()
    for n in numbers:
        size += len(draw(_invoice(n), "ABC12", None, logo))
    return {
        "wall": time.perf_counter() - started,
        "cpu": time.process_time() - cpu,
        "bytes": size,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--logo", action="store_true", help="draw an organizer's logo")
    args = parser.parse_args()
    chunks = [list(range(i, args.count, args.processes)) for i in range(args.processes)]
    load = [round(x, 2) for x in os.getloadavg()]
    with ProcessPoolExecutor(args.processes) as pool:
        warm = list(pool.map(_warm, range(args.processes)))  # imports and fonts, not timed
        started = time.perf_counter()
        results = list(pool.map(_work, chunks, [args.logo] * len(chunks)))
        wall = time.perf_counter() - started
    cpu = sum(r["cpu"] for r in results)
    print(json.dumps({
        "invoices": args.count,
        "processes": args.processes,
        "logo": args.logo,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "cpu_ms_per_invoice": round(cpu / args.count * 1000, 1),
        "wall_s_if_each_process_had_a_core": round(max(r["cpu"] for r in results), 2),
        "avg_kb": round(sum(r["bytes"] for r in results) / args.count / 1024, 1),
        "loadavg_before": load,
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "warmed_processes": sum(warm),
    }))  # fmt: skip


def _warm(_index: int) -> bool:
    from admit.invoices.drawing import draw

    return len(draw(_invoice(0), "WARM0", None)) > 0


if __name__ == "__main__":
    main()
