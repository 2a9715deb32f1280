"""GET of an event detail, authenticated with a team token, on PostgreSQL with 2 workers.

Target (issue: foundation): >= 1,500 requests/s over loopback on the 2-core machine.
Run: .venv/bin/python bench/event_detail.py [--connections 32] [--seconds 15] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import admit, demo_token, fresh_pg_database, server, wrk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    url = fresh_pg_database("admit_bench")
    with tempfile.TemporaryDirectory() as data_dir:
        env = {"ADMIT_DATABASE_URL": url, "ADMIT_DATA_DIR": data_dir}
        admit(env, "migrate")
        token = demo_token(env)["token"]
        with server(env, workers=args.workers) as base:
            target = f"{base}/api/v1/organizers/demo/events/democon/"
            wrk(target, token, connections=8, seconds=3)  # warm-up
            result = wrk(target, token, connections=args.connections, seconds=args.seconds)
    result.pop("raw")
    result.update(
        benchmark="event_detail",
        workers=args.workers,
        connections=args.connections,
        target_rps=1500,
        met=result["requests_per_second"] >= 1500 and result["non_2xx"] == 0,
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
