"""A server that does almost nothing, for telling the machine's stalls from Admit's.

Issue 34 asks whether a stall under a competing load is Admit's doing or whether every server
would stall as long. This one answers each request as a kept list page does at least: one
round trip to PostgreSQL (``SELECT 1`` on a pooled asyncpg connection) and a fixed body of the
same size, from ``--workers`` processes sharing the port (``SO_REUSEPORT``), each with one
asyncio loop and no framework, logging or periodic work. Run beside the same wrk, probe and
competing load (``bench/stalls.py --reference``), its maximum latency is what the machine
alone gives.
Run: .venv/bin/python bench/reference_server.py --port P [--workers 2] [--body-bytes 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import asyncpg

DSN = os.environ.get("ADMIT_BENCH_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


async def _serve(port: int, body: bytes) -> None:
    pool = await asyncpg.create_pool(DSN, min_size=4, max_size=8)
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(
        body
    )

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in request.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                if length:
                    await reader.readexactly(length)
                async with pool.acquire() as connection:
                    await connection.fetchval("SELECT 1")
                writer.write(head + body)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1024)
    server = await asyncio.start_server(client, sock=listener)
    async with server:
        await server.serve_forever()


def _worker(port: int, body_bytes: int) -> None:
    body = b'{"count":1,"results":[' + b"0," * max(0, (body_bytes - 30) // 2) + b"0]}"
    asyncio.run(_serve(port, body))


def start(port: int, workers: int = 2, body_bytes: int = 20_000) -> subprocess.Popen[bytes]:
    """The server, started as ``admit serve`` is by the benchmarks (``bench/common.serving``):
    a process of its own in a session of its own, so that the kernel shares the CPU between
    it and the benchmark's other programs exactly as it does for Admit (with the scheduler's
    autogroups, each session is weighed as one). ``os.killpg`` its pid to stop it; its
    workers are :func:`worker_pids`."""
    command = [sys.executable, __file__, "--port", str(port), "--workers", str(workers)]
    command += ["--body-bytes", str(body_bytes)]
    return subprocess.Popen(command, start_new_session=True)


def worker_pids(server: subprocess.Popen[bytes], workers: int) -> list[int]:
    """The pids of the server's worker processes (waits until all have started)."""
    path = Path(f"/proc/{server.pid}/task/{server.pid}/children")
    for _ in range(200):
        found = [int(pid) for pid in path.read_text().split()]
        if len(found) >= workers:
            return found
        time.sleep(0.05)
    raise RuntimeError("the reference server's workers did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--body-bytes", type=int, default=20_000)
    args = parser.parse_args()
    processes = [
        multiprocessing.Process(target=_worker, args=(args.port, args.body_bytes), daemon=True)
        for _ in range(args.workers)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join()


if __name__ == "__main__":
    main()
