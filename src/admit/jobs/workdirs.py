"""Where a worker's job runs keep their files, and the name a worker claims jobs under.

Apart from the engine so that cleaning up after a killed worker can be read (and called) on its
own: a worker killed mid-export leaves its spooled rows behind, easily hundreds of MB.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import tempfile
from pathlib import Path

# Where job runs keep temporary files: ``<tmp>/admit-jobs/w<pid>/job-<id>-<attempt>/``.
TMP_ROOT = Path(tempfile.gettempdir()) / "admit-jobs"


def remove_stale_tmp(root: Path | None = None) -> list[Path]:
    """Removes the temporary directories of processes that no longer run (a worker killed
    mid-export leaves its spooled rows there, easily hundreds of MB): called when a job
    engine starts, so a restarted worker cleans up after the one it replaces."""
    removed = []
    base = root or TMP_ROOT
    for directory in base.glob("w*") if base.is_dir() else ():
        try:
            pid = int(directory.name[1:])
        except ValueError:
            continue
        if pid != os.getpid() and not _alive(pid):
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
