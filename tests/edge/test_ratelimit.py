"""Rate limits: the sliding window, budgets per credential, per device and per client
address, the headers, 429 with Retry-After, the fast lane, and Redis shared between apps."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import httpx
import pytest
import redis

from admit.config import Settings
from admit.kit.http.ratelimit import (
    Budget,
    MemoryStore,
    RedisStore,
    decide,
    key_prefix,
    rate_limit_layer,
)
from tests.carts import helpers as carts
from tests.checkin import helpers as checkin
from tests.edge.helpers import LaneSpy, client_for, edge_app
from tests.factories import Factory, World, auth
from tests.parts import missing

REDIS_URL = os.environ.get("ADMIT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


# --- the budget and the window -------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "limit", "window"),
    [("600/minute", 600, 60), ("10/second", 10, 1), ("100/10s", 100, 10), ("5 / hour", 5, 3600)],
)
def test_budgets_parse(spec: str, limit: int, window: float):
    assert Budget.parse(spec) == Budget(limit, window)


@pytest.mark.parametrize("spec", ["600", "600/fortnight", "0/minute", "-1/second", "x/minute"])
def test_bad_budgets_are_refused_at_start(spec: str, tmp_path: Path):
    with pytest.raises(ValueError, match="ADMIT_RATE_LIMIT"):
        Budget.parse(spec)
    from admit.config import Settings

    with pytest.raises(ValueError, match="ADMIT_RATE_LIMIT_DEVICE"):
        rate_limit_layer(
            lambda *_: None,  # type: ignore[arg-type,return-value]
            Settings(data_dir=tmp_path, rate_limit="5/minute", rate_limit_device=spec),
        )


def test_off_means_not_in_the_path(tmp_path: Path):
    from admit.config import Settings

    async def inner(scope, receive, send) -> None: ...

    assert rate_limit_layer(inner, Settings(data_dir=tmp_path)) is inner


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_the_window_slides():
    clock = Clock(1000 * 60.0)  # the start of a minute
    store = MemoryStore(clock)
    budget = Budget(10, 60)
    verdicts = [await store.hit("k", budget) for _ in range(11)]
    assert [v.allowed for v in verdicts] == [True] * 10 + [False]
    assert [v.remaining for v in verdicts[:10]] == list(range(9, -1, -1))
    refused = verdicts[-1]
    # All ten are in this minute: the next request fits once enough of them slid out, i.e.
    # 6 s into the next minute (10 * (1 - 6/60) + 1 = 10).
    assert refused.retry_after == 66
    clock.now += 30  # half a minute on: still ten in the window
    assert not (await store.hit("k", budget)).allowed
    clock.now += 36  # 6 s into the next minute: one fits again, a second does not
    assert (await store.hit("k", budget)).allowed
    again = await store.hit("k", budget)
    assert not again.allowed and again.retry_after >= 1
    clock.now += 120  # two idle minutes: the whole budget is back
    fresh = await store.hit("k", budget)
    assert fresh.allowed and fresh.remaining == 9
    # A refused request was not counted: the key's count only holds what got through.
    assert store.counters["k"][1] == 1


def test_no_burst_of_twice_the_budget_at_a_window_edge():
    budget = Budget(10, 60)
    # Ten at the very end of the last minute, then the new minute starts.
    assert not decide(budget, 0.5, 10, 0).allowed
    assert decide(budget, 0.5, 10, 0).retry_after == 6  # until 6 s in: 10 * 54/60 + 1 = 10


async def test_idle_keys_are_forgotten():
    clock = Clock(0.0)
    store = MemoryStore(clock)
    for n in range(100):
        await store.hit(f"ip:{n}", Budget(5, 1))
    clock.now = 10.0
    await store.hit("ip:new", Budget(5, 1))
    assert list(store.counters) == ["ip:new"]


# --- through the application ----------------------------------------------------------------


def limits(response: httpx.Response) -> tuple[int, int, int]:
    return (
        int(response.headers["ratelimit-limit"]),
        int(response.headers["ratelimit-remaining"]),
        int(response.headers["ratelimit-reset"]),
    )


async def test_a_credential_gets_its_budget_then_429(
    database_url: str, tmp_path: Path, world: World
):
    url = f"/api/v1/organizers/{world.org.slug}/events/"
    async with edge_app(database_url, tmp_path, rate_limit="3/minute") as app:
        async with client_for(app) as client:
            answers = [await client.get(url, headers=auth(world.admin)) for _ in range(4)]
            assert [r.status_code for r in answers] == [200, 200, 200, 429]
            assert [limits(r)[1] for r in answers] == [2, 1, 0, 0]
            assert {limits(r)[0] for r in answers} == {3}
            assert all(0 < limits(r)[2] <= 120 for r in answers)
            refused = answers[-1]
            retry = int(refused.headers["retry-after"])
            assert 1 <= retry <= 120
            assert refused.json() == {
                "detail": f"Request was throttled. Expected available in {retry} seconds."
            }
            assert refused.headers["x-content-type-options"] == "nosniff"
            assert refused.headers["x-request-id"]
            # Another credential has a budget of its own, also from the same address.
            other = await client.get(url, headers=auth(world.nobody))
            assert other.status_code != 429 and limits(other)[1] == 2
            # The probes are never limited.
            assert (await client.get("/readyz")).status_code == 200
            assert "ratelimit-limit" not in (await client.get("/healthz")).headers


async def test_without_a_credential_each_address_has_a_budget(
    database_url: str, tmp_path: Path, world: World
):
    async with edge_app(
        database_url, tmp_path, rate_limit="2/minute", trusted_proxies="10.0.0.1"
    ) as app:
        async with (
            client_for(app, ip="198.51.100.1") as one,
            client_for(app, ip="198.51.100.2") as two,
        ):
            assert [(await one.get("/login")).status_code for _ in range(3)] == [200, 200, 429]
            # Pages, the API without credentials, the OAuth endpoints: one budget per address.
            assert (await one.get("/api/v1/organizers/")).status_code == 429
            assert (await two.get("/api/v1/organizers/")).status_code == 401
            assert (await two.get("/login")).status_code == 200
            assert (await two.get("/login")).status_code == 429
        async with client_for(app, ip="10.0.0.1") as proxy:
            # Behind the trusted proxy the client's address is the forwarded one.
            forwarded = {"X-Forwarded-For": "198.51.100.1, 10.0.0.1"}
            assert (await proxy.get("/login", headers=forwarded)).status_code == 429
            fresh = {"X-Forwarded-For": "203.0.113.5"}
            assert (await proxy.get("/login", headers=fresh)).status_code == 200
        async with client_for(app, ip="198.51.100.3") as liar:
            # An untrusted peer cannot pick another address's budget (or escape its own).
            spoof = {"X-Forwarded-For": "203.0.113.77"}
            assert [(await liar.get("/login", headers=spoof)).status_code for _ in range(3)] == [
                200,
                200,
                429,
            ]


@pytest.fixture
def lane(clean_app, monkeypatch: pytest.MonkeyPatch) -> LaneSpy:
    if not clean_app.state.db.fast.native:
        pytest.skip("the fast lane serves on PostgreSQL only")
    return LaneSpy(monkeypatch)


async def test_scanners_have_their_own_larger_budget_on_the_lane(
    database_url: str, tmp_path: Path, world: World, factory: Factory, lane: LaneSpy
):
    item = await checkin.ticket(factory, world.event)
    clist = await checkin.checkin_list(factory, world.event)
    _order, positions = await checkin.order(factory, world.event, item, n=6)
    token, _device = await checkin.device(factory, world.org)
    scanner = checkin.device_auth(token)
    async with edge_app(
        database_url, tmp_path, rate_limit="2/minute", rate_limit_device="5/minute"
    ) as app:
        async with client_for(app) as client:
            scans = [
                await checkin.redeem(client, world, p.secret, [clist.id], headers=scanner)
                for p in positions
            ]
            assert [r.status_code for r in scans] == [201] * 5 + [429]
            assert [limits(r)[:2] for r in scans] == [(5, n) for n in (4, 3, 2, 1, 0, 0)]
            assert lane.count("/redeem/") == 5  # the lane answered, the layer counted
            assert "retry-after" in scans[-1].headers
            # The team token next to it still has its own (smaller) budget.
            events = f"/api/v1/organizers/{world.org.slug}/events/"
            assert limits(await client.get(events, headers=auth(world.admin)))[:2] == (2, 1)


async def test_carts_on_the_lane_are_limited(
    database_url: str, tmp_path: Path, world: World, factory: Factory, lane: LaneSpy
):
    ticket = await carts.item(factory, world.event)
    await carts.quota(factory, world.event, 10, [ticket])
    async with edge_app(database_url, tmp_path, rate_limit="2/minute") as app:
        async with client_for(app) as client:
            answers = [
                await carts.post(client, world, {"item": ticket.id, "price": "23.00"})
                for _ in range(3)
            ]
    assert [r.status_code for r in answers] == [201, 201, 429]
    assert lane.count("/cartpositions/") == 2
    assert [limits(r)[1] for r in answers] == [1, 0, 0]


# --- Redis ------------------------------------------------------------------------------------


def _redis_or_skip() -> None:
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except (redis.RedisError, OSError):
        pytest.skip(missing("Redis", f"not reachable at {REDIS_URL} (ADMIT_TEST_REDIS_URL)"))


async def test_redis_window_is_shared_by_two_app_instances(
    database_url: str, tmp_path: Path, world: World, monkeypatch: pytest.MonkeyPatch
):
    _redis_or_skip()
    # On a loaded machine a burst's new connections can miss the half-second bound and go
    # through unlimited (seen in CI: 5 of 12); going through is test_redis_down_..., not this.
    monkeypatch.setattr(RedisStore, "TIMEOUT", 10.0)
    url = f"/api/v1/organizers/{world.org.slug}/events/"
    headers = auth(world.admin)
    settings = {"rate_limit": "4/minute", "redis_url": REDIS_URL}
    async with (
        edge_app(database_url, tmp_path / "a", **settings) as first,
        edge_app(database_url, tmp_path / "b", **settings) as second,
        client_for(first) as a,
        client_for(second) as b,
    ):
        answers = [await (a if n % 2 else b).get(url, headers=headers) for n in range(5)]
        assert [r.status_code for r in answers] == [200, 200, 200, 200, 429]
        assert [limits(r)[1] for r in answers] == [3, 2, 1, 0, 0]
        # Concurrent requests from both instances: none beyond the budget gets through.
        other = auth(world.nobody)
        burst = await asyncio.gather(
            *[(a if n % 2 else b).get(url, headers=other) for n in range(12)]
        )
        assert all("ratelimit-limit" in r.headers for r in burst), "Redis did not answer"
        assert sum(r.status_code != 429 for r in burst) == 4


async def test_redis_down_lets_requests_through(database_url: str, tmp_path: Path, world: World):
    url = f"/api/v1/organizers/{world.org.slug}/events/"
    dead = "redis://127.0.0.1:1/0"  # nothing listens there
    async with edge_app(database_url, tmp_path, rate_limit="1/minute", redis_url=dead) as app:
        async with client_for(app) as client:
            answers = [await client.get(url, headers=auth(world.admin)) for _ in range(3)]
    assert [r.status_code for r in answers] == [200, 200, 200]
    assert "ratelimit-limit" not in answers[0].headers


async def test_installations_sharing_a_redis_keep_their_own_budgets(
    database_url: str, tmp_path: Path, world: World, monkeypatch: pytest.MonkeyPatch
):
    """Two installations (here: two namespaces) on one real Redis: each has the whole budget
    per address and per credential; with the old fixed prefix they shared one."""
    _redis_or_skip()
    monkeypatch.setattr(RedisStore, "TIMEOUT", 10.0)
    url = f"/api/v1/organizers/{world.org.slug}/events/"
    settings = {"rate_limit": "3/minute", "redis_url": REDIS_URL}
    suffix = uuid.uuid4().hex[:8]  # fresh counters however often the test runs
    async with (
        edge_app(database_url, tmp_path / "a", rate_limit_prefix=f"a{suffix}", **settings) as one,
        edge_app(database_url, tmp_path / "b", rate_limit_prefix=f"b{suffix}", **settings) as two,
        client_for(one) as a,
        client_for(two) as b,
    ):
        for headers in (auth(world.admin), {}):  # per credential, then per address
            answers = [await (a if n % 2 else b).get(url, headers=headers) for n in range(8)]
            assert all("ratelimit-limit" in r.headers for r in answers), "Redis did not answer"
            assert [r.status_code == 429 for r in answers] == [False] * 6 + [True] * 2
    keys = redis.Redis.from_url(REDIS_URL).keys(f"admit:ratelimit:?{suffix}:*")
    assert {k.decode().split(":")[2] for k in keys} == {f"a{suffix}", f"b{suffix}"}


def test_the_default_namespace_is_the_database():
    def prefix(database_url: str, **kw: str) -> str:
        return key_prefix(Settings(database_url=database_url, **kw))

    one = "postgresql+asyncpg://admit:secret@db1:5432/admit"
    assert prefix(one) == prefix("postgresql+asyncpg://admit:other@db1:5432/admit")
    assert "secret" not in prefix(one) and prefix(one).startswith("admit:ratelimit:db-")
    assert prefix(one) != prefix("postgresql+asyncpg://admit:secret@db2:5432/admit")
    assert prefix(one) != prefix("postgresql+asyncpg://admit:secret@db1:5432/admit2")
    assert prefix(one, rate_limit_prefix="shop") == "admit:ratelimit:shop:"
