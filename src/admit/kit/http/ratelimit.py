"""Rate limits: a budget of requests per window for each credential, and for each client
address when a request carries none; scanners (``Authorization: Device``) get their own,
larger budget.

Off unless ``ADMIT_RATE_LIMIT`` is set (e.g. ``600/minute``): the layer then is not even in the
request's path. When on, the count is a sliding window (the current fixed window's count plus
the previous one's, weighted by how much of it still lies inside the sliding window): one
counter pair per key, no list of timestamps, no burst of twice the budget at a window edge.
With ``ADMIT_REDIS_URL`` the counters live in Redis (one script call per request, shared by
every server process and host); without, in the process (each worker process then counts for
itself). If Redis cannot be reached the request is let through: a limiter outage must not
become a ticketing outage.

Every answer carries ``RateLimit-Limit``, ``RateLimit-Remaining`` and ``RateLimit-Reset``
(seconds until the whole budget is back), a refused one is ``429 {"detail": ...}`` with
``Retry-After`` (seconds until the next request will be let through). Requests refused are not
counted, so a client that waits as told gets in.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import time
from dataclasses import dataclass, replace
from typing import Protocol

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from admit.config import Settings
from admit.kit.http.headers import client_address
from admit.kit.http.health import PATHS as HEALTH_PATHS

log = logging.getLogger("admit.ratelimit")

_UNITS = {
    "s": 1, "sec": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
}  # fmt: skip
_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d*)\s*([a-z]+)\s*")
# Scanners get this many times the general budget unless ADMIT_RATE_LIMIT_DEVICE says.
DEVICE_FACTOR = 10


@dataclass(frozen=True)
class Budget:
    limit: int
    window: float  # seconds

    @classmethod
    def parse(cls, spec: str, setting: str = "ADMIT_RATE_LIMIT") -> Budget:
        """``600/minute``, ``10/second``, ``100/10s``, ``50000/hour``, ``1000/day``."""
        found = _SPEC.fullmatch(spec.lower())
        if not found or found.group(3) not in _UNITS or int(found.group(1)) < 1:
            raise ValueError(
                f"{setting}={spec!r}: expected COUNT/UNIT (e.g. 600/minute, 100/10s) with "
                "UNIT second, minute, hour or day"
            )
        window = int(found.group(2) or 1) * _UNITS[found.group(3)]
        if window < 1:
            raise ValueError(f"{setting}={spec!r}: the window must be at least one second")
        return cls(int(found.group(1)), float(window))


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    limit: int
    remaining: int
    reset: int  # seconds until the whole budget is available again
    retry_after: int  # seconds until a request is let through (0 when allowed)


def decide(budget: Budget, elapsed: float, previous: int, current: int) -> Verdict:
    """The sliding-window decision for one request, ``elapsed`` seconds into the current
    fixed window that has ``current`` requests counted, the one before ``previous``."""
    limit, window = budget.limit, budget.window
    used = previous * (window - elapsed) / window + current
    allowed = used + 1 <= limit
    if allowed:
        used += 1
        current += 1
        retry = 0.0
    elif current + 1 <= limit:  # within this window, once enough of the previous slid out
        retry = (window - elapsed) - window * (limit - 1 - current) / previous
    else:  # in the next window, once enough of this one slid out
        retry = (window - elapsed) + window * (1 - (limit - 1) / current)
    if current:
        reset = 2 * window - elapsed
    elif previous:
        reset = window - elapsed
    else:
        reset = 0.0
    return Verdict(
        allowed=allowed,
        limit=limit,
        remaining=max(0, math.floor(limit - used)),
        reset=math.ceil(reset),
        retry_after=max(1, math.ceil(retry)) if not allowed else 0,
    )


class Store(Protocol):
    async def hit(self, key: str, budget: Budget) -> Verdict | None: ...


class MemoryStore:
    """Counters in this process: ``key -> [window index, count, previous count]``."""

    def __init__(self, clock: object = time.time) -> None:
        self.clock = clock
        self.counters: dict[str, list[int]] = {}
        self.swept = 0.0

    async def hit(self, key: str, budget: Budget) -> Verdict:
        now: float = self.clock()  # type: ignore[operator]
        index = int(now // budget.window)
        entry = self.counters.get(key)
        if entry is None or entry[0] < index - 1:
            entry = self.counters[key] = [index, 0, 0]
        elif entry[0] == index - 1:
            entry[:] = [index, 0, entry[1]]
        verdict = decide(budget, now - index * budget.window, entry[2], entry[1])
        if verdict.allowed:
            entry[1] += 1
        if now - self.swept > budget.window:
            self._sweep(now, budget.window)
        return verdict

    def _sweep(self, now: float, window: float) -> None:
        """Forgets keys idle for two windows (they count nothing any more)."""
        self.swept = now
        stale = int(now // window) - 1
        for key in [k for k, v in self.counters.items() if v[0] < stale]:
            del self.counters[key]


# KEYS[1]: the key's prefix; ARGV: window (ms), limit. Redis's clock decides the window so
# every server agrees. Returns {allowed, current before, previous, ms into the window}.
_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local index = math.floor(now / window)
local elapsed = now - index * window
local key = KEYS[1] .. ':' .. index
local current = tonumber(redis.call('GET', key) or '0')
local previous = tonumber(redis.call('GET', KEYS[1] .. ':' .. (index - 1)) or '0')
if previous * (window - elapsed) / window + current + 1 > limit then
  return {0, current, previous, elapsed}
end
redis.call('INCR', key)
redis.call('PEXPIRE', key, 2 * window + 1000)
return {1, current, previous, elapsed}
"""


def key_prefix(settings: Settings) -> str:
    """The installation's namespace for its counters in a Redis that other installations may
    share (``ADMIT_RATE_LIMIT_PREFIX``, else one derived from the database's identity: its
    driver, host, port and name, never its credentials)."""
    if settings.rate_limit_prefix:
        return f"admit:ratelimit:{settings.rate_limit_prefix}:"
    from sqlalchemy.engine import make_url

    url = make_url(settings.resolved_database_url)
    identity = f"{url.get_backend_name()}://{url.host or ''}:{url.port or ''}/{url.database or ''}"
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    return f"admit:ratelimit:db-{digest}:"


class RedisStore:
    """Counters in Redis under ``prefix``, shared by every process using the same Redis and
    prefix."""

    PREFIX = "admit:ratelimit:"
    # Seconds a request waits on Redis before it goes on unlimited: an answer is worth more
    # than its count, and a healthy Redis answers in well under a millisecond.
    TIMEOUT = 0.5

    def __init__(self, url: str, prefix: str = PREFIX) -> None:
        import redis.asyncio

        self.prefix = prefix
        self.client = redis.asyncio.Redis.from_url(
            url, socket_timeout=self.TIMEOUT, socket_connect_timeout=self.TIMEOUT
        )
        self.script = self.client.register_script(_SCRIPT)
        self.warned = 0.0

    async def hit(self, key: str, budget: Budget) -> Verdict | None:
        from redis.exceptions import RedisError

        window_ms = int(budget.window * 1000)
        try:
            allowed, current, previous, elapsed = await self.script(
                keys=[self.prefix + key], args=[window_ms, budget.limit]
            )
        except (RedisError, OSError) as exc:
            if time.monotonic() - self.warned > 60:  # once a minute, not once a request
                self.warned = time.monotonic()
                log.warning("rate limits not enforced: Redis unavailable (%s)", exc)
            return None
        verdict = decide(budget, elapsed / 1000, int(previous), int(current))
        if verdict.allowed != bool(allowed):  # a rounding edge: Redis decided
            retry = 0 if allowed else max(1, verdict.retry_after)
            verdict = replace(verdict, allowed=bool(allowed), retry_after=retry)
        return verdict


def _credential(scope: Scope) -> tuple[bytes, bytes] | None:
    """The auth scheme (lower case) and the whole header value, when there is a credential."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, credential = value.strip().partition(b" ")
            scheme = scheme.lower()
            if credential.strip() and scheme in (b"token", b"device", b"bearer"):
                return scheme, value
            return None
    return None


def _headers(verdict: Verdict) -> list[tuple[bytes, bytes]]:
    return [
        (b"ratelimit-limit", str(verdict.limit).encode()),
        (b"ratelimit-remaining", str(verdict.remaining).encode()),
        (b"ratelimit-reset", str(verdict.reset).encode()),
    ]


async def _refuse(send: Send, verdict: Verdict) -> None:
    unit = "second" if verdict.retry_after == 1 else "seconds"
    detail = f"Request was throttled. Expected available in {verdict.retry_after} {unit}."
    body = orjson.dumps({"detail": detail})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(verdict.retry_after).encode()),
        *_headers(verdict),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def counter_store(settings: Settings, namespace: str = "") -> Store:
    """The counters budgets are kept in: Redis when configured (shared by every process, under
    this installation's prefix and ``namespace``), else this process's memory."""
    if settings.redis_url:
        return RedisStore(settings.redis_url, key_prefix(settings) + namespace)
    return MemoryStore()


def rate_limit_layer(app: ASGIApp, settings: Settings) -> ASGIApp:
    """The edge layer enforcing the budgets; ``app`` itself when rate limits are off (the
    layer's ``store`` attribute is its counters)."""
    if not settings.rate_limit:
        return app
    general = Budget.parse(settings.rate_limit)
    device = (
        Budget.parse(settings.rate_limit_device, "ADMIT_RATE_LIMIT_DEVICE")
        if settings.rate_limit_device
        else Budget(general.limit * DEVICE_FACTOR, general.window)
    )
    store = counter_store(settings)

    async def layer(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] in HEALTH_PATHS:
            await app(scope, receive, send)
            return
        found = _credential(scope)
        if found is None:
            key, budget = "ip:" + client_address(scope, settings), general
        else:
            # Keys hold a hash of the credential, never the credential.
            digest = hashlib.blake2b(found[1], digest_size=16).hexdigest()
            if found[0] == b"device":
                key, budget = "device:" + digest, device
            else:
                key, budget = "cred:" + digest, general
        verdict = await store.hit(key, budget)
        if verdict is None:
            await app(scope, receive, send)
            return
        if not verdict.allowed:
            await _refuse(send, verdict)
            return
        added = _headers(verdict)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *added]
            await send(message)

        await app(scope, receive, send_with_headers)

    layer.store = store  # type: ignore[attr-defined]
    return layer
