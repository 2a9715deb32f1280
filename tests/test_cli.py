"""The ``admit`` command line against a fresh SQLite data dir.

The commands run in this process through Typer's runner (a subprocess costs seconds of Python
start-up, and the suite runs many); what only a real process shows (the entry point, the exit
status on an unmigrated database) is run as one. ``tests/test_newcomer.py`` runs ``make run``'s
commands as the newcomer does.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from admit.app import create_app
from admit.cli import app as cli
from admit.config import Settings


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run(data_dir: Path, *args: str) -> Ran:
    """``admit ARGS`` with only ``ADMIT_DATA_DIR`` of the ``ADMIT_`` variables set."""
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("ADMIT_")}
    env["ADMIT_DATA_DIR"] = str(data_dir)
    result = CliRunner().invoke(cli, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


async def arun(data_dir: Path, *args: str) -> Ran:
    """:func:`run` from a test that runs in an event loop (the commands start their own)."""
    return await asyncio.to_thread(run, data_dir, *args)


def run_process(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADMIT_")}
    env["ADMIT_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "-m", "admit", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def scalar(data_dir: Path, sql: str) -> object:
    conn = sqlite3.connect(data_dir / "admit.sqlite3")
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli")
    result = run(path, "migrate")
    assert result.returncode == 0, result.stderr
    assert "Created the database schema" in result.stderr
    assert (path / "admit.sqlite3").is_file()
    again = run(path, "migrate")
    assert "up to date" in again.stderr
    return path


def test_help_lists_the_commands():
    result = subprocess.run(
        [sys.executable, "-m", "admit", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    for command in ("migrate", "serve", "createuser", "organizer", "demo", "recount-sales"):
        assert command in result.stdout


def test_commands_on_an_unmigrated_database_fail_cleanly(tmp_path: Path):
    result = run_process(tmp_path, "demo", "--json")
    assert result.returncode == 1
    assert result.stdout == ""
    assert "admit migrate" in result.stderr
    assert "Traceback" not in result.stderr


async def test_demo_is_idempotent_and_reuses_its_token(data_dir: Path):
    """Issue 28: ``make run`` (``admit demo``) printed a new never-expiring admin token on
    every start; it prints the demo's token again while that token exists."""
    tokens = []
    for _ in range(2):
        result = await arun(data_dir, "demo", "--json")
        assert result.returncode == 0, result.stderr
        info = json.loads(result.stdout.strip().splitlines()[-1])
        assert set(info) == {
            "base_url",
            "organizer",
            "event",
            "token",
            "ticket_item",
            "checkin_list",
            "shop",
            "customer_accounts",
        }
        assert info["shop"] == f"{info['base_url']}/demo/democon/"
        assert info["customer_accounts"] == f"{info['base_url']}/demo/account/"
        assert info["organizer"] == "demo"
        assert info["event"] == "democon"
        assert info["base_url"].startswith("http")
        tokens.append(info["token"])
    assert tokens[0] == tokens[1]
    assert scalar(data_dir, DEMO_TOKENS) == 1
    token_file = data_dir / "demo_token"
    assert token_file.read_text().strip() == tokens[0]
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert scalar(data_dir, "SELECT count(*) FROM organizers WHERE slug = 'demo'") == 1
    assert scalar(data_dir, "SELECT count(*) FROM events WHERE slug = 'democon'") == 1
    assert scalar(data_dir, "SELECT count(*) FROM teams") == 1
    assert scalar(data_dir, "SELECT count(*) FROM users") == 1

    settings = Settings(
        data_dir=data_dir,
        database_url=f"sqlite+aiosqlite:///{data_dir / 'admit.sqlite3'}",
        base_url="http://testserver",  # list links are built from it (kit/http/hosts)
    )
    app = create_app(settings)
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://testserver"
        ) as client:
            for token in tokens:
                response = await client.get(
                    "/api/v1/organizers/demo/events/", headers={"Authorization": f"Token {token}"}
                )
                assert response.status_code == 200, response.text
                assert [e["slug"] for e in response.json()["results"]] == ["democon"]
            teams = await client.get(
                "/api/v1/organizers/demo/teams/", headers={"Authorization": f"Token {tokens[0]}"}
            )
            assert teams.status_code == 200
            assert teams.json()["count"] == 1
            wrong = await client.get(
                "/api/v1/organizers/demo/events/", headers={"Authorization": "Token nope"}
            )
            assert wrong.status_code == 401
    finally:
        await app.state.db.dispose()


DEMO_TOKENS = (
    "SELECT count(*) FROM team_api_tokens t JOIN teams m ON m.id = t.team_id "
    "JOIN organizers o ON o.id = m.organizer_id WHERE o.slug = 'demo'"
)


async def _demo(data_dir: Path) -> dict:
    result = await arun(data_dir, "demo", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


async def test_a_revoked_demo_token_is_replaced_and_a_scanner_finds_the_live_demo(
    data_dir: Path,
):
    first = (await _demo(data_dir))["token"]
    conn = sqlite3.connect(data_dir / "admit.sqlite3")
    try:
        conn.execute("UPDATE team_api_tokens SET active = 0")
        conn.commit()
    finally:
        conn.close()
    second = (await _demo(data_dir))["token"]
    assert second != first
    assert (data_dir / "demo_token").read_text().strip() == second
    assert (await _demo(data_dir))["token"] == second

    # The demo event is live: a scanner paired with the organizer is offered it.
    url = f"sqlite+aiosqlite:///{data_dir / 'admit.sqlite3'}"
    app = create_app(Settings(data_dir=data_dir, database_url=url))
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8000"
        ) as client:
            headers = {"Authorization": f"Token {second}"}
            event = await client.get("/api/v1/organizers/demo/events/democon/", headers=headers)
            assert event.json()["live"] is True
            device = await client.post(
                "/api/v1/organizers/demo/devices/",
                json={"name": "Entrance scanner", "all_events": True},
                headers=headers,
            )
            assert device.status_code == 201, device.text
            paired = await client.post(
                "/api/v1/device/initialize",
                json={
                    "token": device.json()["initialization_token"],
                    "hardware_brand": "Zebra",
                    "hardware_model": "TC25",
                    "os_name": "Android",
                    "os_version": "8.1.0",
                    "software_brand": "pretixSCAN",
                    "software_version": "1.5.1",
                },
            )
            assert paired.status_code == 200, paired.text
            selection = await client.get(
                "/api/v1/device/eventselection",
                headers={"Authorization": f"Device {paired.json()['api_token']}"},
            )
            assert selection.status_code == 200, selection.text
            assert selection.json()["event"]["slug"] == "democon"
    finally:
        await app.state.db.dispose()


def test_demo_without_json_prints_a_curl_line(data_dir: Path):
    result = run(data_dir, "demo")
    assert result.returncode == 0, result.stderr
    assert "API token: " in result.stdout
    assert "Authorization: Token " in result.stdout
    assert "export ADMIT=http" in result.stdout
    assert "$ADMIT/organizers/demo/events/democon/orders/" in result.stdout


def test_createuser_and_duplicate(data_dir: Path):
    first = run(data_dir, "createuser", "cli-user@example.org", "--password", "x")
    assert first.returncode == 0, first.stderr
    again = run(data_dir, "createuser", "CLI-User@example.org", "--password", "y")
    assert again.returncode != 0
    assert "exists already" in again.stderr
    bad = run(data_dir, "createuser", "not-an-email", "--password", "x")
    assert bad.returncode != 0
    assert scalar(data_dir, "SELECT count(*) FROM users WHERE email LIKE 'cli-user%'") == 1


def test_organizer_create_duplicate_and_bad_slug(data_dir: Path):
    created = run(data_dir, "organizer", "create", "cli-org", "CLI Org")
    assert created.returncode == 0, created.stderr
    duplicate = run(data_dir, "organizer", "create", "cli-org", "Again")
    assert duplicate.returncode != 0
    assert "exists already" in duplicate.stderr
    bad = run(data_dir, "organizer", "create", "bad slug/x", "Bad")
    assert bad.returncode != 0
    assert "slug" in bad.stderr
    assert scalar(data_dir, "SELECT count(*) FROM organizers WHERE slug LIKE 'cli-org%'") == 1
    assert scalar(data_dir, "SELECT name FROM organizers WHERE slug = 'cli-org'") == "CLI Org"


async def test_organizer_create_gives_access_by_token_and_to_its_owner(data_dir: Path):
    owner = await arun(data_dir, "createuser", "owner@example.org", "--password", "pw")
    assert owner.returncode == 0, owner.stderr
    missing = await arun(
        data_dir, "organizer", "create", "owned", "Owned", "--owner", "no@example.org"
    )
    assert missing.returncode != 0
    assert "admit createuser" in missing.stderr
    created = await arun(
        data_dir, "organizer", "create", "owned", "Owned", "--owner", "owner@example.org"
    )
    assert created.returncode == 0, created.stderr
    assert "owner@example.org is a member" in created.stderr
    token = created.stdout.split("API token (team Administrators): ")[1].strip()
    member = scalar(
        data_dir,
        "SELECT u.email FROM team_members m JOIN users u ON u.id = m.user_id "
        "JOIN teams t ON t.id = m.team_id JOIN organizers o ON o.id = t.organizer_id "
        "WHERE o.slug = 'owned'",
    )
    assert member == "owner@example.org"
    url = f"sqlite+aiosqlite:///{data_dir / 'admit.sqlite3'}"
    app = create_app(Settings(data_dir=data_dir, database_url=url, base_url="http://t"))
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            own = await client.get(
                "/api/v1/organizers/owned/events/", headers={"Authorization": f"Token {token}"}
            )
            assert own.status_code == 200, own.text
            other = await client.get(
                "/api/v1/organizers/cli-org/events/", headers={"Authorization": f"Token {token}"}
            )
            assert other.status_code == 403
    finally:
        await app.state.db.dispose()


def test_recount_sales_reports_and_repairs_drift(data_dir: Path):
    assert run(data_dir, "demo", "--json").returncode == 0
    clean = run(data_dir, "recount-sales")
    assert clean.returncode == 0, clean.stderr
    assert "matches" in clean.stdout + clean.stderr
    item = scalar(data_dir, "SELECT min(id) FROM items")
    conn = sqlite3.connect(data_dir / "admit.sqlite3")
    conn.execute(
        "INSERT INTO sales_counts (item_id, variation_id, subevent_id, pending, paid, carts) "
        f"VALUES ({item}, 0, 0, 0, 7, 0)"
    )
    conn.commit()
    conn.close()
    drifted = run(data_dir, "recount-sales")
    assert drifted.returncode == 1
    assert "(0, 7, 0)" in drifted.stdout + drifted.stderr
    assert run(data_dir, "recount-sales", "--fix").returncode == 0
    assert scalar(data_dir, "SELECT count(*) FROM sales_counts WHERE paid = 7") == 0
    assert run(data_dir, "recount-sales").returncode == 0
