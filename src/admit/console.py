"""What every ``admit`` command shares: the console its messages go to (stderr), and the runner
of database work that turns an unreachable database or a missing schema into a message.

:mod:`admit.cli` mounts the sub-apps (``jobs``, ``mail``, ``oauth-app``); they import this module,
never their parent, so the command line has no import circle. It imports nothing of admit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import typer
from rich.console import Console

T = TypeVar("T")

console = Console(stderr=True, soft_wrap=True)


def run_work(work: Coroutine[Any, Any, T]) -> T:
    """Runs a database action; a missing schema or unreachable database is a message, not a
    traceback."""
    from sqlalchemy.exc import DBAPIError

    try:
        return asyncio.run(work)
    except (DBAPIError, OSError) as exc:
        reason = exc.orig if isinstance(exc, DBAPIError) else exc
        console.print(f"[red]Database error: {reason}[/red]")
        console.print("Is the database reachable, and has `admit migrate` been run?")
        raise typer.Exit(1) from None
