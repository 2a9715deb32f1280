"""``admit serve``: uvicorn in one process, or in several with a listening socket each.

Several worker processes that share one listening socket do not share the connections: the
worker that wakes first accepts most of them (seen here: 26 of 32 keep-alive connections on
one of two workers), so under load one worker queues requests while the other idles and the
slowest answers take several times the typical ones. With ``SO_REUSEPORT`` every worker binds
its own socket to the port and the kernel spreads new connections over them evenly. Where
the option is missing, uvicorn's own multi-process mode serves instead.
"""

from __future__ import annotations

import multiprocessing
import signal
import socket
import sys
from multiprocessing.connection import wait
from typing import Any

APP = "admit.app:create_app"
OPTIONS: dict[str, Any] = {
    "factory": True,
    "loop": "uvloop",
    "http": "httptools",
    "access_log": False,
    "log_level": "warning",
    "proxy_headers": True,
    # Longer than clients usually keep idle connections (httpx: 5 s, as uvicorn's default), so
    # the client closes first: at equal timeouts a scanner's request can cross the server's
    # close on the wire and fail with a reset (seen in the door-rush tests).
    "timeout_keep_alive": 75,
}


def serve(host: str, port: int, workers: int) -> None:
    import uvicorn

    if workers <= 1 or not hasattr(socket, "SO_REUSEPORT"):
        uvicorn.run(APP, host=host, port=port, workers=workers, **OPTIONS)
        return
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_worker, args=(host, port)) for _ in range(workers)]
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for process in processes:
            if process.is_alive():
                process.terminate()  # uvicorn finishes open requests, then exits

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for process in processes:
        process.start()
    # A sentinel becomes ready when its process has ended; is_alive() may still say True
    # for a moment after that (the process is closing down), so only the sentinels count.
    running = {process.sentinel for process in processes}
    while running:
        ended = wait(list(running))
        running.difference_update(ended)  # type: ignore[arg-type]
        if ended and not stopping:
            # A worker died (or could not bind): stop the rest and say so, rather than serve
            # on with fewer workers than asked for; a supervisor restarts the service.
            stop(signal.SIGTERM, None)
            for process in processes:
                process.join(timeout=30)
            sys.exit(1)
    for process in processes:
        process.join()


def _worker(host: str, port: int) -> None:
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    uvicorn.Server(uvicorn.Config(APP, **OPTIONS)).run(sockets=[sock])
