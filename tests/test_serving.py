"""``admit serve --workers 2`` as a process: keeps idle connections longer than clients do,
stops cleanly on SIGTERM, and stops with exit status 1 when a worker dies."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live import _wait_until_serving, free_port

REQUEST = b"GET /api/v1/nothing-here HTTP/1.1\r\nHost: test\r\n\r\n"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    port = free_port()
    env = {
        **os.environ,
        "ADMIT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'admit.db'}",
        "ADMIT_DATA_DIR": str(tmp_path),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "admit", "serve", "--port", str(port), "--workers", "2"],
        env=env,
        start_new_session=True,
    )
    try:
        _wait_until_serving(f"http://127.0.0.1:{port}", process)
        yield process, port
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _answer(sock: socket.socket) -> bytes:
    """The status line of the answer to one request on ``sock`` (read whole, body too)."""
    sock.sendall(REQUEST)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        body += sock.recv(65536)
    return head.split(b"\r\n")[0]


def _workers(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    cmdlines = {int(c): Path(f"/proc/{c}/cmdline").read_bytes() for c in children}
    return [c for c, cmd in cmdlines.items() if b"multiprocessing.spawn" in cmd]


def test_idle_connection_outlives_a_client_keepalive_then_sigterm_stops_all(served) -> None:
    process, port = served
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        assert _answer(sock) == b"HTTP/1.1 404 Not Found"  # answered on the same connection
        time.sleep(6)  # longer than httpx keeps an idle connection (5 s)
        assert _answer(sock) == b"HTTP/1.1 404 Not Found"  # answered on the same connection
    os.killpg(process.pid, signal.SIGTERM)  # as a supervisor stops the service
    assert process.wait(timeout=20) == 0
