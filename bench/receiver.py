"""A local webhook receiver for the benchmarks: answers 200 and records what arrived when."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    """Runs in a thread of the benchmark's process; ``deliveries`` holds (time, payload)."""

    def __init__(self) -> None:
        self.deliveries: list[tuple[float, dict]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                arrived = time.time()
                try:
                    payload = json.loads(body)
                except ValueError:
                    payload = {}
                with receiver.lock:
                    receiver.deliveries.append((arrived, payload))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()

    def count(self) -> int:
        with self.lock:
            return len(self.deliveries)


def create_webhook(base: str, token: str, target_url: str, actions: list[str]) -> dict:
    """A webhook of the demo organizer for ``actions`` on every event."""
    import httpx

    hook = httpx.post(
        f"{base}/api/v1/organizers/demo/webhooks/",
        json={
            "target_url": target_url,
            "enabled": True,
            "all_events": True,
            "limit_events": [],
            "action_types": actions,
        },
        headers={"Authorization": f"Token {token}"},
    )
    hook.raise_for_status()
    return hook.json()
