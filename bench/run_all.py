"""Runs every benchmark in turn (``make bench``); each prints one JSON line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = [
    "event_detail.py",
    "availability.py",
    "rush.py",
    "redeem.py",
    "jobs.py",
    "webhooks.py",
    "export.py",
    "render.py",
    "ordinary.py",
    "access_log.py",
    "device_sync.py",
    "signed_redeem.py",
    "invoice_pdfs.py",
    "invoice_payments.py",
]

if __name__ == "__main__":
    failed = 0
    for name in BENCHMARKS:
        print(f"== {name}", flush=True)
        failed |= subprocess.run([sys.executable, str(HERE / name)]).returncode
    sys.exit(failed)
