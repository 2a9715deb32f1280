"""The ``admit`` command line: migrate, serve, createuser, organizer create, demo."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from admit.config import Settings
from admit.console import console, run_work
from admit.devices.cli import device_app
from admit.jobs.cli import jobs_app
from admit.mail.cli import mail_app
from admit.oauth.cli import oauth_app

if TYPE_CHECKING:
    from admit.bootstrap import DemoResult

app = typer.Typer(help="Admit ticketing server.", no_args_is_help=True, add_completion=False)
organizer_app = typer.Typer(help="Manage organizers.", no_args_is_help=True)
app.add_typer(organizer_app, name="organizer")
app.add_typer(jobs_app, name="jobs")
app.add_typer(mail_app, name="mail")
app.add_typer(oauth_app, name="oauth-app")
app.add_typer(device_app, name="device")


@app.command()
def migrate() -> None:
    """Create or upgrade the database schema."""
    from admit.migrate import upgrade

    settings = Settings()
    url = settings.resolved_database_url
    before = run_work(_schema_revision(url))
    upgrade(url)
    after = run_work(_schema_revision(url))
    if before is None:
        console.print(f"[green]Created the database schema (revision {after}).[/green]")
    elif before != after:
        console.print(f"[green]Upgraded the database schema from {before} to {after}.[/green]")
    else:
        console.print(f"[green]Database schema is up to date (revision {after}).[/green]")


async def _schema_revision(url: str) -> str | None:
    """The schema's Alembic revision; None for a database without the schema."""
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    from admit.db import create_database

    database = create_database(url)
    try:
        async with database.engine.connect() as conn:
            return await conn.scalar(text("SELECT version_num FROM alembic_version"))
    except DBAPIError:
        return None
    finally:
        await database.dispose()


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind.")] = 8000,
    workers: Annotated[int, typer.Option(help="Worker processes.")] = 1,
    access_log: Annotated[
        bool, typer.Option(help="One log line per request (ADMIT_ACCESS_LOG).")
    ] = True,
) -> None:
    """Serve the API with uvicorn (uvloop, httptools); several workers get a socket each."""
    import os

    if not access_log:  # the workers read their settings from the environment
        os.environ["ADMIT_ACCESS_LOG"] = "false"
    from admit.serving import serve as run_server

    run_server(host, port, workers)


@app.command()
def worker(
    concurrency: Annotated[
        int | None, typer.Option(help="Jobs run at once (default ADMIT_JOB_CONCURRENCY).")
    ] = None,
) -> None:
    """Run background jobs from the broker (ADMIT_REDIS_URL or ADMIT_BROKER_URL)."""
    import admit.all_tasks  # noqa: F401  (every package's job kinds and periodic tasks)
    from admit.jobs.cli import worker as run_worker

    run_worker(concurrency)


@app.command()
def scheduler() -> None:
    """Run the periodic work (each task once per period, however many schedulers run)."""
    import admit.all_tasks  # noqa: F401  (every package's job kinds and periodic tasks)
    from admit.jobs.cli import scheduler as run_scheduler

    run_scheduler()


@app.command()
def createuser(
    email: str,
    password: Annotated[str | None, typer.Option(help="Password (prompted when omitted).")] = None,
    staff: Annotated[bool, typer.Option("--staff", help="Make the user staff.")] = False,
) -> None:
    """Create a user account."""
    from admit.bootstrap import create_user

    if password is None and sys.stdin.isatty():
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        run_work(create_user(Settings(), email, password, staff))
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from None
    console.print(f"Created user {email}" + ("" if password else " (no password set)"))


@organizer_app.command("create")
def organizer_create(
    slug: str,
    name: str,
    owner: Annotated[
        str | None,
        typer.Option(help="E-mail of an existing user who joins its Administrators team."),
    ] = None,
) -> None:
    """Create an organizer with an Administrators team and print an API token of that team."""
    from admit.bootstrap import create_organizer

    try:
        token = run_work(create_organizer(Settings(), slug, name, owner))
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from None
    joined = f"; {owner} is a member of its Administrators team" if owner else ""
    console.print(f"Created organizer {slug}{joined}")
    print(f"API token (team Administrators): {token}")


@app.command()
def demo(
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line.")] = False,
) -> None:
    """Load the demo organizer and event (idempotent) and print its API token: the same one
    on every run while it exists (kept in the data dir's ``demo_token``, mode 0600)."""
    from admit.bootstrap import load_demo

    settings = Settings()
    result = run_work(load_demo(settings))
    base_url = (settings.base_url or "http://127.0.0.1:8000").rstrip("/")
    info = {
        "base_url": base_url,
        "organizer": result.organizer,
        "event": result.event,
        "token": result.token,
        "ticket_item": result.ticket_item,
        "checkin_list": result.checkin_list,
        "shop": f"{base_url}/{result.organizer}/{result.event}/",
        "customer_accounts": f"{base_url}/{result.organizer}/account/",
    }
    if as_json:
        print(json.dumps(info))
        return
    print(f"Demo organizer: {result.organizer}, event: {result.event}")
    print(f"Demo user: {result.email} / password: {result.password}")
    print(f"API token: {result.token}")
    print(f"Shop (buy a ticket in the browser): {info['shop']}")
    print(f"Buyers' customer accounts: {info['customer_accounts']}")
    print(demo_steps(base_url, result))


def demo_steps(base_url: str, demo: DemoResult) -> str:
    """The newcomer's first sale and scan, as shell lines to paste once the server runs
    (``tests/test_newcomer.py`` runs exactly these)."""
    event = f"$ADMIT/organizers/{demo.organizer}/events/{demo.event}"
    order = json.dumps(
        {
            "email": "ada@example.org",
            "status": "p",
            "payment_provider": "banktransfer",
            "positions": [{"item": demo.ticket_item, "attendee_name": "Ada Lovelace"}],
        }
    )
    pick_secret = (
        'python3 -c \'import json,sys; print(json.load(sys.stdin)["positions"][0]["secret"])\''
    )
    # The secret goes between the JSON's single-quoted halves, expanded by the shell.
    redeem = '{"secret": "\'"$SECRET"\'", "lists": [' + str(demo.checkin_list) + "]}"
    lines = [
        "Next steps, once the server runs (paste into a shell):",
        f"  export ADMIT={base_url}/api/v1 TOKEN={demo.token}",
        "  # the event",
        f'  curl -sS -w "\\n" -H "Authorization: Token $TOKEN" {event}/',
        "  # sell a paid ticket at the box office and keep its secret",
        f'  SECRET=$(curl -sS -H "Authorization: Token $TOKEN" -H "Content-Type: application/json" '
        f"-d '{order}' {event}/orders/ | {pick_secret})",
        "  # scan it at the entrance",
        f'  curl -sS -w "\\n" -H "Authorization: Token $TOKEN" -H "Content-Type: application/json" '
        f"-d '{redeem}' $ADMIT/organizers/{demo.organizer}/checkinrpc/redeem/",
    ]
    return "\n".join(lines)


@app.command("recount-sales")
def recount_sales(
    fix: Annotated[
        bool, typer.Option("--fix", help="Replace the totals with the recount.")
    ] = False,
) -> None:
    """Compare the sales ledger behind availability with a recount (exit 1 on drift)."""
    from admit.db import create_database
    from admit.quotas import ledger

    async def work() -> dict:
        db = create_database(Settings().resolved_database_url)
        try:
            async with db.sessionmaker() as session:
                drifted = await ledger.drift(session)
                if drifted and fix:
                    await ledger.rebuild(session)
                    await session.commit()
                return drifted
        finally:
            await db.dispose()

    drifted = run_work(work())
    for key, (have, want) in sorted(drifted.items()):
        console.print(f"item/variation/date {key}: stored {have}, recounted {want}")
    if not drifted:
        console.print("[green]The sales ledger matches a recount.[/green]")
    elif fix:
        console.print("[yellow]Drift found and repaired.[/yellow]")
    else:
        raise typer.Exit(1)


def main() -> None:
    app()
