"""``admit serve --workers 2`` supervises its workers (any database; SQLite here).

A worker that dies is replaced and the server serves on; workers that cannot even start (the
port is held by another program) make the server give up with exit status 1 instead of
restarting them forever.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.faults.site import AdmitProcess

pytestmark = pytest.mark.slow


def _sqlite(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'admit.db'}"


def test_a_killed_worker_is_replaced_and_sigterm_still_stops_cleanly(tmp_path: Path) -> None:
    server = AdmitProcess(_sqlite(tmp_path), tmp_path)
    server.start()
    try:
        first = server.workers()
        assert len(first) == 2
        os.kill(first[0], signal.SIGKILL)
        server.wait_for_replacement(first[0])
        assert server.process is not None and server.process.poll() is None
        # Both sockets answer: every new connection gets an answer.
        for _ in range(10):
            response = httpx.get(f"{server.url}/api/v1/nothing-here", timeout=10)
            assert response.status_code == 404
        assert f"worker {first[0]} ended (exit code -9)" in server.log
    finally:
        code = server.stop()
    assert code == 0, server.log


def test_workers_that_cannot_start_make_the_server_exit_1(tmp_path: Path) -> None:
    # Another program holds the port without SO_REUSEPORT: no worker can bind it.
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        env = {
            **os.environ,
            "ADMIT_DATABASE_URL": _sqlite(tmp_path),
            "ADMIT_DATA_DIR": str(tmp_path),
        }
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "admit", "serve", "--port", str(port), "--workers", "2"],
            env=env,
            capture_output=True,
            timeout=55,
        )
    assert result.returncode == 1, result.stderr[-2000:]
    stderr = result.stderr.decode(errors="replace")
    assert "workers in a row ended within" in stderr, stderr[-2000:]
    assert "Address already in use" in stderr
    assert time.monotonic() - started < 55
