"""``admit mail list|show|retry``: what the outbox holds, and why a mail did not go out."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from sqlalchemy import func, select

from admit.config import Settings
from admit.console import console, run_work
from admit.db import Database, create_database

mail_app = typer.Typer(help="Inspect and resend outgoing e-mail.", no_args_is_help=True)

STATUSES = ("queued", "sent", "failed")


def _output() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _run_with_db(work: Callable[[Database], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        db = create_database(Settings().resolved_database_url, pool_size=2)
        try:
            return await work(db)
        finally:
            await db.dispose()

    return run_work(run())


@mail_app.command("list")
def list_mails(
    status: Annotated[str | None, typer.Option(help="queued, sent or failed")] = None,
    limit: Annotated[int, typer.Option(help="At most this many, newest first.")] = 50,
) -> None:
    """List outgoing mails, newest first, and how many there are per status."""
    if status is not None and status not in STATUSES:
        raise typer.BadParameter(f"status must be one of {', '.join(STATUSES)}")

    async def work(db: Database) -> tuple[list[Any], dict[str, int]]:
        from admit.models import OutgoingMail as M

        query = select(M.id, M.status, M.created, M.to, M.subject, M.error)
        query = query.order_by(M.id.desc()).limit(max(1, limit))
        if status:
            query = query.where(M.status == status)
        async with db.sessionmaker() as session:
            rows = list((await session.execute(query)).all())
            counts = select(M.status, func.count()).group_by(M.status)
            return rows, dict((await session.execute(counts)).all())  # type: ignore[arg-type]

    rows, counts = _run_with_db(work)
    table = Table("id", "status", "created", "to", "subject")
    for row in rows:
        table.add_row(
            str(row.id),
            row.status,
            row.created.isoformat(timespec="seconds"),
            ", ".join(row.to),
            row.subject,
        )
    out = _output()
    out.print(table)
    out.print(", ".join(f"{s}: {counts.get(s, 0)}" for s in STATUSES))


@mail_app.command("show")
def show_mail(mail_id: Annotated[int, typer.Argument(help="The mail's id.")]) -> None:
    """Show one mail: headers, delivery state, the text body and attachment names."""

    async def work(db: Database) -> Any:
        from admit.models import OutgoingMail

        async with db.sessionmaker() as session:
            return await session.get(OutgoingMail, mail_id)

    mail = _run_with_db(work)
    if mail is None:
        console.print(f"[red]No mail {mail_id}.[/red]")
        raise typer.Exit(1)
    lines = [
        f"Message-ID: {mail.message_id or ''}",
        f"To: {', '.join(mail.to)}",
        *([f"Cc: {', '.join(mail.cc)}"] if mail.cc else []),
        *([f"Bcc: {', '.join(mail.bcc)}"] if mail.bcc else []),
        f"Subject: {mail.subject}",
        f"Status: {mail.status} (attempts: {mail.attempts}, job: {mail.job_id or '-'})",
        f"Created: {mail.created.isoformat(timespec='seconds')}",
        f"Sent: {mail.sent.isoformat(timespec='seconds') if mail.sent else '-'}",
        f"Error: {mail.error or '-'}",
        f"HTML part: {'yes' if mail.html else 'no'}",
        "Attachments: "
        + (", ".join(a["filename"] for a in mail.attachments) if mail.attachments else "-"),
        "",
        mail.body,
    ]
    # Plain print: a body is text someone wrote, never console markup.
    print("\n".join(lines))


@mail_app.command("retry")
def retry_mail(mail_id: Annotated[int, typer.Argument(help="The mail's id.")]) -> None:
    """Send a failed mail again (after the server or the address was fixed)."""
    from admit.kit.http.transaction import commit_and_notify
    from admit.mail.tasks import enqueue_delivery

    async def work(db: Database) -> bool:
        from admit.models import OutgoingMail

        async with db.sessionmaker() as session:
            mail = await session.get(OutgoingMail, mail_id, with_for_update=True)
            if mail is None or mail.status != "failed":
                return False
            mail.status, mail.error, mail.attempts = "queued", None, 0
            await enqueue_delivery(session, mail)
            await commit_and_notify(session)
            return True

    if not _run_with_db(work):
        console.print(f"[red]No failed mail {mail_id}.[/red]")
        raise typer.Exit(1)
    print(f"Mail {mail_id} is queued again; a worker or a running server sends it.")
