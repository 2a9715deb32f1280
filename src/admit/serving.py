"""``admit serve``: uvicorn in one process, or in several with a listening socket each.

Several worker processes that share one listening socket do not share the connections: the
worker that wakes first accepts most of them (seen here: 26 of 32 keep-alive connections on
one of two workers), so under load one worker queues requests while the other idles and the
slowest answers take several times the typical ones. With ``SO_REUSEPORT`` every worker binds
its own socket to the port and the kernel spreads new connections over them evenly. Where
the option is missing, uvicorn's own multi-process mode serves instead.

The parent process supervises the workers: one that dies (killed, out of memory, a crash in
native code) is replaced at once, so the service keeps its capacity without an outside
supervisor noticing. Requests the dead worker was answering are lost with it (their clients
see the connection close); their transactions were never committed, so nothing is half
written. Workers that keep dying right after they start (the port is taken, the settings are
wrong) are not restarted forever: the server stops with exit status 1 and says why.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import socket
import sys
import time
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from typing import Any

import uvicorn

from admit.kit.http.logs import configure_logging, uvicorn_log_config

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
    "log_config": uvicorn_log_config(),  # ADMIT_LOG_FORMAT, request ids, scrubbed lines
}

# A worker that ends sooner than this after its start did not start properly; after this many
# such ends in a row the server gives up. A replacement starts after a pause that doubles with
# every early end (from RESTART_DELAY up to MAX_RESTART_DELAY seconds).
MIN_UPTIME = 10.0
MAX_EARLY_EXITS = 5
RESTART_DELAY = 0.1
MAX_RESTART_DELAY = 5.0

# Without a logging configuration, warnings and errors still reach stderr (Python's last
# resort handler), where a service manager's journal keeps them.
log = logging.getLogger("admit.serving")


def serve(host: str, port: int, workers: int) -> None:
    configure_logging()
    if workers <= 1:
        config = uvicorn.Config(APP, host=host, port=port, **OPTIONS)
        _AnnouncingServer(config).run()
        return
    if not hasattr(socket, "SO_REUSEPORT"):
        uvicorn.run(APP, host=host, port=port, workers=workers, **OPTIONS)
        return
    sys.exit(Supervisor(host, port, workers).run())


def _listening(host: str, port: int, workers: int) -> None:
    """The one line that says where the server answers (uvicorn's own start-up lines are
    below the log level)."""
    shown = f"[{host}]" if ":" in host else host
    plural = "s" if workers != 1 else ""
    log.info("admit serve: listening on http://%s:%d (%d worker%s)", shown, port, workers, plural)


class _AnnouncingServer(uvicorn.Server):
    """uvicorn's server, saying where it listens once it does."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if not self.should_exit:
            _listening(self.config.host, self.config.port, 1)


class Supervisor:
    """Starts ``workers`` worker processes and keeps that many running until SIGTERM/SIGINT."""

    def __init__(self, host: str, port: int, workers: int) -> None:
        self.host = host
        self.port = port
        self.workers = workers
        self.context = multiprocessing.get_context("spawn")
        self.processes: dict[int, tuple[BaseProcess, float]] = {}  # sentinel: (process, start)
        self.stopping = False
        self.early_exits = 0
        self.restarts = 0

    def run(self) -> int:
        """Supervises until stopped (exit status 0) or until workers keep dying at start (1)."""
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        for _ in range(self.workers):
            self._start()
        _listening(self.host, self.port, self.workers)
        while self.processes:
            # A sentinel becomes ready when its process has ended; is_alive() may still say
            # True for a moment after that (the process is closing down): sentinels count.
            for sentinel in wait(list(self.processes)):
                process, started = self.processes.pop(sentinel)  # type: ignore[call-overload]
                process.join()
                replaced = self.stopping or self._replace(process, started)
                process.close()  # its sentinel's descriptor, so restarts leak none
                if not replaced:
                    self._stop(signal.SIGTERM, None)
                    self._join_all()
                    return 1
        return 0

    def _start(self) -> None:
        process = self.context.Process(target=_worker, args=(self.host, self.port))
        process.start()
        self.processes[process.sentinel] = (process, time.monotonic())

    def _replace(self, process: BaseProcess, started: float) -> bool:
        """Starts a worker in place of one that ended; False when it is time to give up."""
        lived = time.monotonic() - started
        self.early_exits = self.early_exits + 1 if lived < MIN_UPTIME else 0
        if self.early_exits >= MAX_EARLY_EXITS:
            log.error(
                "admit serve: %d workers in a row ended within %.0f s of their start (last "
                "exit code %s); stopping. See the messages above.",
                self.early_exits,
                MIN_UPTIME,
                process.exitcode,
            )
            return False
        log.warning(
            "admit serve: worker %s ended (exit code %s) after %.1f s; starting another",
            process.pid,
            process.exitcode,
            lived,
        )
        if self.early_exits:
            delay = min(RESTART_DELAY * 2 ** (self.early_exits - 1), MAX_RESTART_DELAY)
        else:
            delay = RESTART_DELAY
        # The pause also lets a SIGTERM that killed the worker reach this process first.
        time.sleep(delay)
        if self.stopping:
            return True
        self._start()
        self.restarts += 1
        return True

    def _stop(self, _signum: int, _frame: object) -> None:
        self.stopping = True
        for process, _started in self.processes.values():
            if process.is_alive():
                process.terminate()  # uvicorn finishes open requests, then exits

    def _join_all(self) -> None:
        for process, _started in self.processes.values():
            process.join(timeout=30)


def _worker(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    # Not listening yet: the kernel hands new connections only to listening sockets, and
    # uvicorn listens (backlog 2048) once the application is loaded and started. A worker
    # that starts in place of a dead one takes seconds to import the application; listening
    # before would leave the connections the kernel gives it waiting all that time.
    config = uvicorn.Config(APP, backlog=2048, **OPTIONS)
    uvicorn.Server(config).run(sockets=[sock])
