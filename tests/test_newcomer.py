"""A newcomer's first hour, scripted: a fresh data dir, ``admit migrate``, ``admit demo``,
``admit serve``, then exactly the shell lines the demo printed, run by bash with curl. It
ends with a ticket sold at the box office and admitted at the entrance."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.live import free_port, serving

pytestmark = pytest.mark.skipif(
    not (shutil.which("curl") and shutil.which("bash")), reason="needs curl and bash"
)


def _admit(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "admit", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=True,
    )


def test_the_printed_next_steps_sell_and_admit_a_ticket(tmp_path: Path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADMIT_")}
    env |= {"ADMIT_DATA_DIR": str(tmp_path), "ADMIT_BASE_URL": f"http://127.0.0.1:{port}"}
    migrated = _admit(env, "migrate")
    assert "Created the database schema" in migrated.stderr
    printed = _admit(env, "demo").stdout
    steps = printed.split("Next steps", 1)[1].splitlines()[1:]
    commands = [line.strip() for line in steps if line.strip() and not line.strip().startswith("#")]
    assert any("checkinrpc/redeem" in c for c in commands), printed

    with serving(env, tmp_path / "server.log", port=port):
        script = "set -euo pipefail\n" + "\n".join(commands) + "\n"
        ran = subprocess.run(
            ["bash", "-c", script], capture_output=True, text=True, timeout=120, check=False
        )
    assert ran.returncode == 0, ran.stderr + ran.stdout
    outputs = ran.stdout.strip().splitlines()
    event = json.loads(outputs[0])
    assert event["slug"] == "democon"
    scan = json.loads(outputs[-1])
    assert scan["status"] == "ok", scan
    assert scan["position"]["attendee_name"] == "Ada Lovelace"
