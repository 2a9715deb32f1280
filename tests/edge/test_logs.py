"""Request ids, access lines, the JSON and text formats, and the server's logging hook."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from admit.config import Settings
from admit.kit.http.logs import REQUEST_ID, logging_config, safe_target, scrub
from tests.edge.helpers import captured_logs, client_for, edge_app
from tests.factories import World, auth
from tests.live import free_port


async def test_a_sane_request_id_is_echoed(client):
    response = await client.get("/healthz", headers={"X-Request-ID": "lb-7f3a:42"})
    assert response.headers.get_list("x-request-id") == ["lb-7f3a:42"]


# The last two look like secrets: the access line, which is not scrubbed again, must not
# carry them.
@pytest.mark.parametrize(
    "given",
    [None, "", "x" * 129, "a b", "evil\u00e9", "a\tb", "token=abc123", "/download/abc"],
)
async def test_otherwise_one_is_made(client, given: str | None):
    headers = {} if given is None else {"X-Request-ID": given.encode("utf-8")}
    first = await client.get("/healthz", headers=headers)
    second = await client.get("/healthz", headers=headers)
    made = first.headers["x-request-id"]
    assert len(made) == 32 and int(made, 16) >= 0
    assert made != second.headers["x-request-id"] and made != given


async def test_json_lines_parse_and_carry_the_request_id(clean_app, world: World):
    probe = logging.getLogger("admit.edge_probe")

    async def logs_inside() -> dict[str, str]:
        probe.warning("inside the request")
        return {"id": REQUEST_ID.get()}

    clean_app.add_api_route("/_edge_log_probe", logs_inside)
    try:
        with captured_logs(logging.INFO) as logs:
            async with client_for(clean_app) as client:
                answer = await client.get(
                    "/_edge_log_probe?token=abcdefghij0123456789&page=2",
                    headers={"X-Request-ID": "probe-1"},
                )
                events = await client.get(
                    f"/api/v1/organizers/{world.org.slug}/events/", headers=auth(world.admin)
                )
    finally:
        clean_app.router.routes.pop()
    assert answer.json() == {"id": "probe-1"}
    lines = [json.loads(line) for line in logs.json_lines]
    inside = [line for line in lines if line["logger"] == "admit.edge_probe"]
    assert inside and inside[0]["request_id"] == "probe-1"
    assert inside[0]["level"] == "WARNING" and inside[0]["message"] == "inside the request"
    access = [line for line in lines if line["logger"] == "admit.access"]
    assert [a["request_id"] for a in access] == ["probe-1", events.headers["x-request-id"]]
    first = access[0]
    assert first["method"] == "GET" and first["status"] == 200
    assert first["path"] == "/_edge_log_probe?token=[redacted]&page=2"
    assert isinstance(first["duration_ms"], float) and first["duration_ms"] >= 0
    assert first["time"].endswith("+00:00")
    text = [line for line in logs.text_lines if "admit.access" in line]
    assert "[probe-1] GET /_edge_log_probe?token=[redacted]&page=2 200" in text[0]
    # Outside a request the id is a dash.
    assert REQUEST_ID.get() == "-"


async def test_access_log_can_be_switched_off(database_url: str, tmp_path: Path):
    async with edge_app(database_url, tmp_path, access_log=False) as app:
        with captured_logs(logging.INFO) as logs:
            async with client_for(app) as client:
                response = await client.get("/healthz")
    assert response.headers["x-request-id"]
    assert not [r for r in logs.records if r.name == "admit.access"]


def test_secret_parts_of_targets_are_replaced():
    assert safe_target("/password-reset/abc123def/", b"") == "/password-reset/[redacted]/"
    assert (
        safe_target("/acme/account/password/eyJjIjoxfQ.aBc/", b"")
        == "/acme/account/password/[redacted]/"
    )
    assert safe_target("/invite/t0k3n/", b"x=1") == "/invite/[redacted]/?x=1"
    assert (
        safe_target("/api/v1/organizers/o/jobs/1f2e/download/s3cr3t/", b"")
        == "/api/v1/organizers/o/jobs/1f2e/download/[redacted]"
    )
    assert safe_target("/oauth/authorize", b"client_id=abc&code=xyz&state=q&scope=read") == (
        "/oauth/authorize?client_id=[redacted]&code=[redacted]&state=[redacted]&scope=read"
    )


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Authorization: Token abcdefghijklmnop0123", "Authorization: Token [redacted]"),
        ("header Device a1b2c3d4e5f6g7h8i9j0", "header Device [redacted]"),
        ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc", "Bearer [redacted]"),
        ("{'password': 'hunter22', 'email': 'a@b.c'}", "{'password': '[redacted]', 'email'"),
        ('{"secret": "x9y8z7", "name": "n"}', '{"secret": "[redacted]", "name": "n"}'),
        ("[SQL: INSERT ...]\n[parameters: ('s3cr3t', 1)]\n(Background", "[parameters: [redacted]]"),
        ("Token inactive or deleted.", "Token inactive or deleted."),
    ],
)
def test_scrub(text: str, kept: str):
    assert kept in scrub(text)


def test_logging_config_follows_the_settings(tmp_path: Path):
    config = logging_config(Settings(data_dir=tmp_path, log_format="json", log_level="info"))
    assert config["handlers"]["stderr"]["formatter"] == "json"
    assert config["loggers"]["admit"]["level"] == "INFO"
    default = logging_config(Settings(data_dir=tmp_path))
    assert default["handlers"]["stderr"]["formatter"] == "text"
    assert default["loggers"]["admit.access"]["level"] == "INFO"
    with pytest.raises(ValueError):
        Settings(data_dir=tmp_path, log_format="xml")


def test_admit_serve_writes_json_lines_with_request_ids(tmp_path: Path, database_url: str):
    if not database_url.startswith("sqlite"):
        pytest.skip("one server process is enough (runs on its own SQLite database)")
    env = {
        **os.environ,
        "ADMIT_DATA_DIR": str(tmp_path),
        "ADMIT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'serve.sqlite3'}",
        "ADMIT_LOG_FORMAT": "json",
        "ADMIT_RATE_LIMIT": "100/minute",
    }
    admit = [sys.executable, "-m", "admit"]
    subprocess.run([*admit, "migrate"], env=env, check=True, capture_output=True)
    port = free_port()
    log_file = (tmp_path / "serve.log").open("w+")
    server = subprocess.Popen(
        [*admit, "serve", "--port", str(port)], env=env, stderr=log_file, stdout=log_file
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                ready = httpx.get(f"{base}/readyz", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, "server did not start"
                time.sleep(0.1)
        assert ready.status_code == 200 and "ratelimit-limit" not in ready.headers
        answer = httpx.get(
            f"{base}/api/v1/organizers/?token=secretvalue12345",
            headers={"X-Request-ID": "serve-42", "Authorization": "Token abcdefghijklmnopqrstu"},
        )
        assert answer.status_code == 401 and answer.headers["x-request-id"] == "serve-42"
        assert answer.headers["ratelimit-limit"] == "100"
        time.sleep(0.3)
    finally:
        server.terminate()
        server.wait(timeout=30)
    log_file.seek(0)
    output = log_file.read()
    lines = [json.loads(line) for line in output.splitlines() if line.strip()]
    access = [line for line in lines if line["logger"] == "admit.access"]
    ours = [line for line in access if line["request_id"] == "serve-42"]
    assert len(ours) == 1, output
    assert ours[0]["path"] == "/api/v1/organizers/?token=[redacted]" and ours[0]["status"] == 401
    assert "secretvalue12345" not in output and "abcdefghijklmnopqrstu" not in output


async def test_control_characters_in_a_path_cannot_forge_log_lines(clean_app):
    """A real request whose path carries %0a, %0d and %1b (the server decodes them): each
    access line stays one line, in text and JSON, with the characters escaped."""
    forged = "/api/v1/x%0a2026-01-01 00:00:00 INFO admit.access [-] GET /admin 200%0d%1b[2J%5c"
    with captured_logs(logging.INFO) as logs:
        async with client_for(clean_app) as client:
            response = await client.get(forged + "?q=%0a")
    assert response.status_code == 404
    (text,) = [line for line in logs.text_lines if "admit.access" in line]
    assert "\n" not in text and "\r" not in text and "\x1b" not in text
    expected = r"GET /api/v1/x\x0a2026-01-01 00:00:00 INFO admit.access [-] GET /admin 200"
    assert expected + r"\x0d\x1b[2J\\?q=%0a 404" in text
    (line,) = [json.loads(j) for j in logs.json_lines if '"admit.access"' in j]
    assert line["path"] == r"/api/v1/x\x0a2026-01-01 00:00:00 INFO admit.access [-] GET /admin" + (
        r" 200\x0d\x1b[2J\\?q=%0a"
    )
    assert "\n" not in line["message"] and "\x1b" not in line["message"]
