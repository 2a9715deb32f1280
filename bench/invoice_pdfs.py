"""Invoice PDFs: ``--count`` invoices of three lines (names in several scripts) drawn as a
worker draws them (``admit.invoices.drawing.draw``: reportlab PDF, Factur-X XML made and
schema-checked, embedded with its PDF/A-3 metadata), in ``--processes`` processes.

Reported: wall seconds, invoices/s, and per invoice the PDF alone and PDF plus XML (CPU time
of the processes beside wall time: on a shared machine the wall time also counts other work).
Target (issue 33): 1,000 invoice PDFs < 10 s on this machine kind (2 cores).
Run: .venv/bin/python bench/invoice_pdfs.py [--count 1000] [--processes 2]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
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


def _work(numbers: list[int]) -> dict[str, float]:
    from admit.invoices import pdf
    from admit.invoices.drawing import draw

    draw(_invoice(0), "WARM1", None)  # fonts and schemas loaded once per process
    cpu, plain, full, size = time.process_time(), 0.0, 0.0, 0
    for n in numbers:
        invoice = _invoice(n)
        started = time.perf_counter()
        pdf.render(invoice, "ABC12")
        plain += time.perf_counter() - started
        started = time.perf_counter()
        size += len(draw(invoice, "ABC12", None))
        full += time.perf_counter() - started
    return {"plain": plain, "full": full, "cpu": time.process_time() - cpu, "bytes": size}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    chunks = [list(range(i, args.count, args.processes)) for i in range(args.processes)]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.processes) as pool:
        results = list(pool.map(_work, chunks))
    wall = time.perf_counter() - started
    full = sum(r["full"] for r in results)
    print(json.dumps({
        "invoices": args.count,
        "processes": args.processes,
        "wall_s_incl_plain_pass": round(wall, 2),
        "pdf_with_facturx_s_per_process": round(full / args.processes, 2),
        "ms_per_invoice_pdf_only": round(sum(r["plain"] for r in results) / args.count * 1000, 1),
        "ms_per_invoice_pdf_and_xml": round(full / args.count * 1000, 1),
        "cpu_s": round(sum(r["cpu"] for r in results), 2),
        "avg_kb": round(sum(r["bytes"] for r in results) / args.count / 1024, 1),
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
