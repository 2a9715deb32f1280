"""``admit device create``: a scanner pairs from what it prints (issue 29). Run as a real
subprocess against a fresh SQLite data dir; the PNG's QR code is read back with zxing-cpp and
its token initializes the device through the API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import zxingcpp
from PIL import Image

from admit.app import create_app
from admit.config import Settings


def _run(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADMIT_")}
    env["ADMIT_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "-m", "admit", *args], env=env, capture_output=True, text=True,
        timeout=60, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("devices")
    assert _run(path, "migrate").returncode == 0
    made = _run(path, "demo", "--json")
    assert made.returncode == 0, made.stderr
    return path


async def test_device_create_prints_a_pairing_code_a_scanner_can_use(data_dir: Path):
    png = data_dir / "pair.png"
    made = _run(data_dir, "device", "create", "demo", "Door 1", "--event", "democon",
                "--url", "https://tickets.example.org/", "--png", str(png))  # fmt: skip
    assert made.returncode == 0, made.stderr
    lines = made.stdout.splitlines()
    handshake = json.loads(lines[-1])
    assert set(handshake) == {"handshake_version", "url", "token"}
    assert handshake["handshake_version"] == 1
    assert handshake["url"] == "https://tickets.example.org"
    assert f"Initialization token (one use): {handshake['token']}" in lines
    assert sum("█" in line for line in lines) > 10  # the terminal QR code

    (decoded,) = zxingcpp.read_barcodes(Image.open(png))
    assert json.loads(decoded.text) == handshake

    app = create_app(Settings(data_dir=data_dir, base_url="http://testserver"))
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://testserver"
        ) as client:
            paired = await client.post(
                "/api/v1/device/initialize",
                json={"token": handshake["token"], "hardware_brand": "Zebra",
                      "hardware_model": "TC25", "software_brand": "pretixSCAN",
                      "software_version": "1.5.1"},
            )  # fmt: skip
            assert paired.status_code == 200, paired.text
            body = paired.json()
            assert (body["organizer"], body["name"]) == ("demo", "Door 1")
            assert body["security_profile"] == "pretixscan"
            device = {"Authorization": f"Device {body['api_token']}"}
            event = await client.get("/api/v1/organizers/demo/events/democon/", headers=device)
            assert event.status_code == 200
            again = await client.post(
                "/api/v1/device/initialize", json={"token": handshake["token"]}
            )
            assert again.status_code == 400  # one use
    finally:
        await app.state.db.dispose()


def test_device_create_refuses_what_does_not_exist(data_dir: Path):
    nobody = _run(data_dir, "device", "create", "nobody", "Door")
    assert nobody.returncode == 1 and "no organizer" in nobody.stderr + nobody.stdout
    no_event = _run(data_dir, "device", "create", "demo", "Door", "--event", "nope")
    assert no_event.returncode == 1 and "nope" in no_event.stderr + no_event.stdout
