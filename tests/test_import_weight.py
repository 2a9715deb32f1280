"""An API process built for serving loads none of the libraries only background work uses
(ticket PDFs, webhook sending, the taskiq broker): each costs every server worker memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = ("reportlab", "pypdf", "zxingcpp", "PIL", "fontTools", "taskiq", "aiohttp", "httpx")

PROBE = """
import json, sys
from admit.app import create_app
create_app()
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:]))))
"""


def test_the_embedded_server_loads_no_background_only_library(tmp_path):
    env = {
        **os.environ,
        "ADMIT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'probe.db'}",
        "ADMIT_DATA_DIR": str(tmp_path),
    }
    for name in ("ADMIT_REDIS_URL", "ADMIT_BROKER_URL"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *HEAVY], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
