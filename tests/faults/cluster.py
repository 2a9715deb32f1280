"""A private PostgreSQL cluster a fault test may stop and restart at will.

The shared test server must never be restarted under the other tests, so a fault test starts
its own: ``initdb`` into a temporary directory and ``pg_ctl start`` on a free port, owned and
run by the ``postgres`` OS user (PostgreSQL refuses to run as root; the tests run as root in
CI, so the commands go through ``runuser``). Durability is switched off: it is a scratch
cluster, and a restart with ``-m fast`` is a clean shutdown anyway.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.live import free_port
from tests.parts import missing


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version, reverse=True)
    if found:
        return Path(found[0]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


def _version(path: str) -> int:
    part = Path(path).parent.parent.name
    return int(part) if part.isdigit() else 0


def missing_reason() -> str | None:
    """Why a private cluster cannot be started here, or None when it can."""
    if _bin_dir() is None:
        return "no PostgreSQL server binaries (initdb, pg_ctl) installed"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' OS user to run PostgreSQL as"
        if shutil.which("runuser") is None:
            return "running as root and runuser is missing"
    return None


class PrivateCluster:
    """One scratch cluster: ``start``, ``stop``, ``restart`` and a URL to reach it."""

    def __init__(self) -> None:
        reason = missing_reason()
        if reason:
            pytest.skip(missing("private PostgreSQL cluster", reason))
        self.bin = _bin_dir()
        self.port = free_port()
        # Not under pytest's tmp dir: that one is private to root, PostgreSQL runs as postgres.
        self.root = Path(tempfile.mkdtemp(prefix="admit-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._owner: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            self._owner = pwd.getpwnam("postgres")
            os.chown(self.root, self._owner.pw_uid, self._owner.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-sync")  # fmt: skip

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, tool: str, *args: str, timeout: float = 60) -> None:
        command = [str(self.bin / tool), *args]  # type: ignore[operator]
        if self._owner is not None:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, timeout=timeout, cwd=self.root)
        if result.returncode != 0:
            raise RuntimeError(f"{tool} failed: {result.stdout!r} {result.stderr!r}")

    def _options(self) -> str:
        return (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-o", self._options(), "-l", str(self.log),
                  "-w", "-t", "30", "start")  # fmt: skip

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "30", "stop")

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every session is ended, the server comes back."""
        self._run("pg_ctl", "-D", str(self.data), "-o", self._options(), "-l", str(self.log),
                  "-m", "fast", "-w", "-t", "30", "restart")  # fmt: skip

    def running(self) -> bool:
        with socket.socket() as sock:
            sock.settimeout(0.5)
            return sock.connect_ex(("127.0.0.1", self.port)) == 0

    def destroy(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def wait_until(self, up: bool, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while self.running() != up:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster is not {'up' if up else 'down'} in time")
            time.sleep(0.05)
