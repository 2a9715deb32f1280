"""``admit worker`` and ``admit scheduler`` log as ``admit serve`` does: at ``ADMIT_LOG_LEVEL``
in ``ADMIT_LOG_FORMAT`` (issue 28: they printed an INFO text line every second whatever was
configured). The real commands run for a few seconds and their stderr is read: all of them at
once, each on its own copy of the migrated database (one after the other they took half a
minute, most of it waiting)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

RUN_SECONDS = 3.0


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def base_env(tmp_path_factory) -> dict[str, str]:
    data = tmp_path_factory.mktemp("logging")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ADMIT_") or k == "ADMIT_TEST_DATABASE_URL"
    }
    env.pop("ADMIT_TEST_DATABASE_URL", None)
    env.update(
        ADMIT_DATA_DIR=str(data),
        ADMIT_DATABASE_URL=f"sqlite+aiosqlite:///{Path(data) / 'admit.sqlite3'}",
        ADMIT_JOB_SWEEP_SECONDS="1",
    )
    subprocess.run(
        [sys.executable, "-m", "admit", "migrate"], env=env, check=True, capture_output=True
    )
    return env


def _run(command: str, env: dict[str, str], expect_start: bool = True) -> list[str]:
    """stderr lines of ``admit <command>``: it runs until its start line was written (or
    30 s), then RUN_SECONDS more, then it is stopped with SIGTERM."""
    process = subprocess.Popen(
        [sys.executable, "-m", "admit", command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(process.stderr.readline, "")))
    reader.start()
    deadline = time.monotonic() + 30
    while expect_start and time.monotonic() < deadline:
        if any("scheduler started" in x or "jobs at once" in x for x in lines):
            break
        time.sleep(0.1)
    time.sleep(RUN_SECONDS)
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    reader.join(timeout=20)
    return [line.rstrip("\n") for line in lines if line.strip()]


def _env(base: dict[str, str], command: str, **extra: str) -> dict[str, str]:
    env = dict(base, **extra)
    if command == "worker":
        env["ADMIT_REDIS_URL"] = "redis://127.0.0.1:6379/0"
        env["ADMIT_JOB_QUEUE"] = f"admit-test-logging-{uuid.uuid4().hex}"
    return env


def _needs_broker(command: str) -> None:
    if command == "worker" and not _redis_up():
        pytest.skip("the worker needs Redis on 127.0.0.1:6379")


# Every run the tests read: (command, extra environment).
RUNS = {
    "scheduler-json": ("scheduler", {"ADMIT_LOG_FORMAT": "json"}),
    "worker-json": ("worker", {"ADMIT_LOG_FORMAT": "json"}),
    "scheduler-text": ("scheduler", {}),
    "scheduler-debug": ("scheduler", {"ADMIT_LOG_LEVEL": "debug"}),
    "worker-text": ("worker", {}),
}


def _own_database(base: dict[str, str], folder: Path) -> dict[str, str]:
    """``base`` on a copy of its database: concurrent schedulers would share their leases."""
    shutil.copy(Path(base["ADMIT_DATA_DIR"]) / "admit.sqlite3", folder / "admit.sqlite3")
    return dict(
        base,
        ADMIT_DATA_DIR=str(folder),
        ADMIT_DATABASE_URL=f"sqlite+aiosqlite:///{folder / 'admit.sqlite3'}",
    )


@pytest.fixture(scope="module")
def logged(base_env, tmp_path_factory) -> dict[str, list[str]]:
    """The stderr lines of every run of :data:`RUNS` (the worker's only with Redis)."""
    runs = {name: spec for name, spec in RUNS.items() if spec[0] != "worker" or _redis_up()}
    with ThreadPoolExecutor(len(runs)) as pool:
        started = {
            name: pool.submit(
                _run,
                command,
                _env(_own_database(base_env, tmp_path_factory.mktemp(name)), command, **extra),
            )
            for name, (command, extra) in runs.items()
        }
        return {name: future.result() for name, future in started.items()}


@pytest.mark.parametrize("command", ["scheduler", "worker"])
def test_json_format_and_default_level(logged, command):
    _needs_broker(command)
    records = [json.loads(line) for line in logged[f"{command}-json"]]  # each line one object
    # At the default level (WARNING) only the start line is written, not a line a second.
    infos = [r for r in records if r["level"] == "INFO"]
    assert [r["logger"] for r in infos] == ["admit.jobs.lifecycle"], records
    assert all(r["level"] != "DEBUG" for r in records)


def test_scheduler_debug_level_in_text_shows_the_periodic_work(logged):
    quiet, loud = logged["scheduler-text"], logged["scheduler-debug"]
    assert len(quiet) <= 2, quiet
    assert not any(line.startswith("{") for line in quiet)
    assert len(loud) > len(quiet), loud
    assert any(" INFO admit.jobs [" in line for line in loud), loud  # the sweep, each second
    assert not any(line.startswith("{") for line in loud)


def test_worker_text_at_the_default_level_is_quiet(logged):
    _needs_broker("worker")
    lines = logged["worker-text"]
    assert not any(line.startswith("{") for line in lines)
    assert [line for line in lines if " INFO " in line] == [
        line for line in lines if "admit.jobs.lifecycle" in line
    ], lines
