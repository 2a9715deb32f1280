"""``admit oauth-app create|list|rotate-secret|delete``: OAuth applications for the operator
(applications users register themselves are on their settings pages)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import typer
from rich.console import Console
from sqlalchemy import select

from admit.config import Settings
from admit.console import console, run_work
from admit.db import Database, create_database
from admit.oauth import apps

oauth_app = typer.Typer(help="Manage OAuth applications.", no_args_is_help=True)


def _output() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _in_transaction(work: Callable[[Any], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        db: Database = create_database(Settings().resolved_database_url, pool_size=2)
        try:
            async with db.sessionmaker() as session:
                result = await work(session)
                await session.commit()
                return result
        finally:
            await db.dispose()

    return run_work(run())


def _fail(message: str) -> None:
    console.print(f"[red]{message}[/red]")
    raise typer.Exit(1)


@oauth_app.command("create")
def create(
    name: str,
    redirect_uri: Annotated[
        list[str], typer.Option("--redirect-uri", help="Allowed redirect URI (repeatable).")
    ],
    public: Annotated[
        bool, typer.Option("--public", help="A public client: no secret, PKCE required.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line.")] = False,
) -> None:
    """Register an application; prints its client id and secret (shown only now)."""
    problems = apps.name_problems(name) + apps.redirect_uri_problems(redirect_uri)
    if problems:
        _fail(" ".join(problems))

    async def work(session: Any) -> tuple[str, str | None]:
        app, secret = await apps.create(session, name, redirect_uri, public=public)
        return app.client_id, secret

    client_id, secret = _in_transaction(work)
    out = _output()
    if as_json:
        print(json.dumps({"client_id": client_id, "client_secret": secret}))
        return
    out.print(f"Created OAuth application {name!r}")
    out.print(f"client_id:     {client_id}")
    out.print(f"client_secret: {secret or '(none: public client)'}")
    if secret:
        out.print("Keep the secret safe: it is not shown again (rotate-secret makes a new one).")


@oauth_app.command("list")
def list_apps() -> None:
    """List applications: client id, name, type, owner, redirect URIs."""
    from admit.models import OAuthApplication, User

    async def work(session: Any) -> list[Any]:
        query = (
            select(OAuthApplication, User.email)
            .outerjoin(User, User.id == OAuthApplication.owner_id)
            .order_by(OAuthApplication.id)
        )
        return list((await session.execute(query)).all())

    rows = _in_transaction(work)
    out = _output()
    if not rows:
        out.print("No OAuth applications.")
    for app, email in rows:
        kind = "public" if app.secret_hash is None else "confidential"
        # One line each, tab-separated: readable, and easy to cut in scripts.
        out.print("\t".join([app.client_id, app.name, kind, email or "-", *app.redirect_uris]))


@oauth_app.command("rotate-secret")
def rotate_secret(
    client_id: str,
    as_json: Annotated[bool, typer.Option("--json", help="End with one JSON line.")] = False,
) -> None:
    """Replace the client secret (the old one stops working at once) and print the new one."""

    async def work(session: Any) -> str | None:
        app = await apps.by_client_id(session, client_id)
        return None if app is None else apps.new_secret(app)

    secret = _in_transaction(work)
    if secret is None:
        _fail(f"No OAuth application with client id {client_id}.")
    if as_json:
        print(json.dumps({"client_id": client_id, "client_secret": secret}))
        return
    _output().print(f"client_secret: {secret}")


@oauth_app.command("delete")
def delete(client_id: str) -> None:
    """Delete an application with every authorization and token it holds."""

    async def work(session: Any) -> bool:
        app = await apps.by_client_id(session, client_id)
        if app is None:
            return False
        await apps.remove(session, app)
        return True

    if not _in_transaction(work):
        _fail(f"No OAuth application with client id {client_id}.")
    _output().print(f"Deleted OAuth application {client_id}")
