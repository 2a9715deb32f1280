"""Seeing stalls: a probe that times single requests second by second, and a competing load.

Why (issue 34): wrk's p99 and maximum say that some request waited a second, not when, nor
whether one connection was starved while the others were served. The probe is one more
client, as a scanner at the gate is: one kept connection, one request at a time with a pause
between (``PAUSE`` seconds, so it costs the machine little), each timed; its answers are
grouped by the second they were sent in, giving a p99 and a maximum per second: a stall shows
as a second whose maximum stands out, and its time tells what ran then (a periodic task, a
page cache's fill). ``compete`` starts one busy process per core at the lowest priority, as
the issue asks (another program on the machine), for the duration of a ``with`` block.

``--reference`` runs the same wrk, probe and competing load against
``bench/reference_server.py`` (a server that does one database round trip a request and
nothing else): its maximum is what the machine alone gives.
Run: .venv/bin/python bench/stalls.py --reference [--seconds 65] [--compete 2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.rawhttp import Connection

PAUSE = 0.005
_BUSY = "while True:\n    pass\n"


class _Sampler:
    """Samples in a thread of its own while a ``with`` block runs (``_sample`` until stopped)."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def _sample(self) -> None:
        raise NotImplementedError


class Probe(_Sampler):
    """Times ``GET url`` (or POST ``body``) on its own connection, in a thread, until stopped."""

    def __init__(self, url: str, token: str, body: dict | None = None) -> None:
        parts = urlsplit(url)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.headers = {"Authorization": f"Token {token}"}
        self.body = body
        self.samples: list[tuple[float, float, int]] = []  # (sent at, seconds taken, status)
        super().__init__()

    def _sample(self) -> None:
        asyncio.run(self._run())

    async def _run(self) -> None:
        connection = Connection(self.base, self.headers)
        method = "GET" if self.body is None else "POST"
        try:
            while not self._stop.is_set():
                sent = time.monotonic()
                answer = await connection.request(method, self.path, self.body)
                self.samples.append((sent, time.monotonic() - sent, answer.status))
                await asyncio.sleep(PAUSE)
        finally:
            await connection.close()

    def report(self, waits: RunQueueWaits | None = None) -> dict:
        """Per second: the probe's p99 and maximum (ms); overall: count, p99, maximum, the
        worst second, answers over 200 and 500 ms, and non-2xx answers; with ``waits``, the
        workers' wait for a CPU per second beside them."""
        if not self.samples:
            return {"probe_requests": 0}
        start = self.samples[0][0]
        seconds: dict[int, list[float]] = {}
        for sent, took, _ in self.samples:
            seconds.setdefault(int(sent - start), []).append(took * 1000)
        trace = [
            (second, round(_p99(values), 1), round(max(values), 1))
            for second, values in sorted(seconds.items())
        ]
        every = [took * 1000 for _, took, _ in self.samples]
        worst = max(trace, key=lambda row: row[2])
        return {
            "probe_requests": len(every),
            "probe_p99_ms": round(_p99(every), 1),
            "probe_max_ms": round(max(every), 1),
            "probe_over_200ms": sum(1 for v in every if v > 200),
            "probe_over_500ms": sum(1 for v in every if v > 500),
            "probe_non_2xx": sum(1 for *_, status in self.samples if not 200 <= status < 300),
            "probe_worst_second": {"second": worst[0], "p99_ms": worst[1], "max_ms": worst[2]},
            # [second, p99 ms, max ms] for each second of the run
            "probe_per_second": trace,
            # [second, the most one worker waited for a CPU in it, ms]
            **({"cpu_wait_per_second": waits.per_second(start)} if waits else {}),
        }


class RunQueueWaits(_Sampler):
    """How long the server's workers waited for a CPU, second by second (the kernel's
    ``/proc/<pid>/schedstat``: time runnable but not running), beside the probe's seconds. A
    stall in a second without such a wait was the server's own doing (a blocking call, a long
    task); one with it may be the machine's, which ``--reference`` tells (the same load
    against a server that does almost nothing)."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.samples: list[tuple[float, dict[int, int]]] = []  # (time, waited ns per pid)
        super().__init__()

    def _sample(self) -> None:
        while not self._stop.is_set():
            waited = {}
            for pid in self.pids:
                try:
                    waited[pid] = int(open(f"/proc/{pid}/schedstat").read().split()[1])
                except (OSError, IndexError, ValueError):
                    continue
            self.samples.append((time.monotonic(), waited))
            self._stop.wait(0.1)

    def per_second(self, start: float) -> list[tuple[int, float]]:
        """[second since ``start``, the most one worker waited for a CPU in it (ms)]."""
        by_second: dict[int, dict[int, float]] = {}
        for (_, before), (at, after) in zip(self.samples, self.samples[1:], strict=False):
            waits = by_second.setdefault(int(at - start), {})
            for pid, now in after.items():
                waits[pid] = waits.get(pid, 0.0) + (now - before.get(pid, now)) / 1e6
        return [
            (second, round(max(waits.values(), default=0.0), 1))
            for second, waits in sorted(by_second.items())
            if second >= 0
        ]


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.99) - 1)]


def _lowest_autogroup_priority(pid: int) -> bool:
    """Sets the scheduler autogroup of ``pid`` (its session) to nice 19; False where the
    kernel has no autogroups (then the process's own nice is all that counts)."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text("19")
    except OSError:
        return False
    return True


@contextlib.contextmanager
def compete(processes: int) -> Iterator[list[int]]:
    """``processes`` busy loops at the lowest priority while the block runs: each another
    program, in a session of its own, as the issue's "another program on the machine" is.

    Where the kernel groups the CPU by session (``sched_autogroup_enabled``, on in Debian's
    kernels) a process's nice counts only against the processes of its own session; between
    sessions each group counts as one task of its group's nice. The servers under test run in
    sessions of their own (``bench/common.serving``, ``reference_server.start``), so a busy
    loop merely started with ``nice 19`` from this process would compete with them at full
    weight, and with this process's own wrk at nice 19. Until session 23 it did so: Admit's
    workers were starved for up to 0.55 s (seen from a watchdog thread in the worker), while
    the reference server, then started in this session, was protected by the nice."""
    busy = [
        subprocess.Popen(
            ["nice", "-n", "19", sys.executable, "-c", _BUSY],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for _ in range(processes)
    ]
    for process in busy:
        _lowest_autogroup_priority(process.pid)
    try:
        yield [p.pid for p in busy]
    finally:
        for process in busy:
            process.kill()
        for process in busy:
            process.wait()


def cores() -> int:
    return len(os.sched_getaffinity(0))


def _reference_run(args: argparse.Namespace) -> dict:
    """wrk, the probe and the CPU waits against ``bench/reference_server.py``."""
    from bench import reference_server
    from bench.common import free_port, latency_ms, wrk

    port = free_port()
    server = reference_server.start(port, args.workers, args.body_bytes)
    url = f"http://127.0.0.1:{port}/"
    try:
        pids = reference_server.worker_pids(server, args.workers)
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        time.sleep(1)  # every worker's pool open
        with compete(args.compete), Probe(url, "-") as probe:
            with RunQueueWaits(pids) as waits:
                result = wrk(url, "-", connections=args.connections, seconds=args.seconds)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait()
    return {
        "benchmark": "reference_server",
        "compete": args.compete,
        "seconds": args.seconds,
        "requests_per_second": result["requests_per_second"],
        "p50_ms": latency_ms(result["p50"]),
        "p99_ms": latency_ms(result["p99"]),
        "max_ms": latency_ms(result["max"]),
        **probe.report(waits),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reference", action="store_true", required=True,
                        help="measure bench/reference_server.py (the machine alone)")  # fmt: skip
    parser.add_argument("--seconds", type=int, default=65)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--compete", type=int, default=0)
    parser.add_argument("--body-bytes", type=int, default=20_000)
    report = _reference_run(parser.parse_args())
    print(json.dumps(report))


if __name__ == "__main__":
    main()
