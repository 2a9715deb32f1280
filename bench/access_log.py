"""What one access line costs a request: ``kit/http/logs._access_line`` through the server's own
logging configuration (text and JSON), written to /dev/null, in microseconds per line.

Every request pays it, the rush lanes included, so it is kept small: the line is built from
parts that are scrubbed once (the request target, the request id when it is taken) and not
scrubbed again as a whole. Run: .venv/bin/python bench/access_log.py
"""

from __future__ import annotations

import json
import logging
import logging.config
import time

from admit.config import Settings
from admit.kit.http import logs

LINES = 50_000


def per_line_us(log_format: str) -> float:
    config = logs.logging_config(Settings(log_format=log_format))
    config["handlers"]["stderr"]["stream"] = open("/dev/null", "w")
    logging.config.dictConfig(config)
    access = logging.getLogger(logs.ACCESS_LOGGER)
    scope = {
        "method": "GET",
        "path": "/api/v1/organizers/demo/events/democon/items/",
        "query_string": b"page=2",
        "client": ("127.0.0.1", 50000),
    }
    token = logs.REQUEST_ID.set("0123456789abcdef0123456789abcdef")
    try:
        started = time.perf_counter()
        for _ in range(LINES):
            logs._access_line(access, scope, 200, 0.00123)
        return round((time.perf_counter() - started) / LINES * 1e6, 2)
    finally:
        logs.REQUEST_ID.reset(token)


if __name__ == "__main__":
    text, structured = per_line_us("text"), per_line_us("json")
    print(json.dumps({"benchmark": "access_log", "text_us": text, "json_us": structured}))
