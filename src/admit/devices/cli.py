"""``admit device create ORGANIZER NAME [--event SLUG…]``: pair a scanner from the server.

Creates a device (of every event, or of the named ones) and prints what a scanner app needs
to pair with it: the one-time initialization token and the reference's handshake payload
``{"handshake_version": 1, "url": …, "token": …}`` as JSON text and as a QR code in the
terminal (and, with ``--png FILE``, as an image), so a phone pairs by scanning it. The token
is only good for one ``device/initialize``; it is printed here and stored hashed nowhere else
but the device row, as the API's device create answers it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Annotated, Any

import segno
import typer
from pydantic import ValidationError
from rich.console import Console
from sqlalchemy import select

from admit.config import Settings
from admit.console import console, run_work
from admit.db import Database, create_database
from admit.devices import service
from admit.devices.schemas import DeviceIn
from admit.kit.http.errors import FieldErrors
from admit.models import Organizer

device_app = typer.Typer(help="Manage scanner devices.", no_args_is_help=True)
HANDSHAKE_VERSION = 1


def handshake(url: str, token: str) -> dict[str, Any]:
    """What a scanner app reads from the pairing QR code."""
    return {"handshake_version": HANDSHAKE_VERSION, "url": url, "token": token}


def terminal_qr(text: str) -> str:
    """``text`` as a QR code drawn with Unicode half blocks (two modules per character)."""
    out = io.StringIO()
    segno.make(text, error="m", micro=False).terminal(out=out, compact=True, border=2)
    return out.getvalue()


def _fail(message: str) -> None:
    console.print(f"[red]{message}[/red]")
    raise typer.Exit(1)


async def _create(organizer_slug: str, data: DeviceIn) -> tuple[int, str, str] | str:
    """(device number, serial, initialization token), or the reason it was refused."""
    db: Database = create_database(Settings().resolved_database_url, pool_size=2)
    try:
        async with db.sessionmaker() as session:
            organizer = await session.scalar(
                select(Organizer).where(Organizer.slug == organizer_slug)
            )
            if organizer is None:
                return f"There is no organizer {organizer_slug!r}."
            try:
                device = await service.create_device(session, organizer.id, data)
            except FieldErrors as exc:
                return json.dumps(exc.errors)
            result = (device.device_id, device.unique_serial, device.initialization_token)
            await session.commit()
            return result
    finally:
        await db.dispose()


@device_app.command("create")
def create(
    organizer: str,
    name: str,
    event: Annotated[
        list[str] | None,
        typer.Option("--event", help="Limit the device to this event (repeatable); default all."),
    ] = None,
    security_profile: Annotated[
        str, typer.Option("--security-profile", help="full, pretixscan or pretixscan_online_kiosk.")
    ] = "pretixscan",
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            help="The server's address as the phone reaches it; default "
            "ADMIT_BASE_URL, else http://127.0.0.1:8000.",
        ),
    ] = None,
    png: Annotated[
        Path | None, typer.Option("--png", help="Also write the QR code as a PNG image here.")
    ] = None,
) -> None:
    """Create a scanner device and print its pairing QR code (initialization token inside)."""
    try:
        data = DeviceIn(
            name=name,
            all_events=not event,
            limit_events=list(event or []),
            security_profile=security_profile,  # type: ignore[arg-type]
        )
    except ValidationError as exc:
        _fail(" ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()))
        return
    made = run_work(_create(organizer, data))
    if isinstance(made, str):
        _fail(made)
        return
    number, serial, token = made
    base = (url or Settings().base_url or "http://127.0.0.1:8000").rstrip("/")
    payload = json.dumps(handshake(base, token), separators=(",", ":"))
    out = Console(highlight=False, soft_wrap=True)
    out.print(f"Device {number} ({name}, serial {serial}) created.")
    out.print(f"Initialization token (one use): {token}")
    out.print("Scan this with the scanner app to pair it:")
    out.print(terminal_qr(payload), markup=False, end="")
    if png is not None:
        segno.make(payload, error="m", micro=False).save(str(png), scale=8, border=2)
        out.print(f"QR code written to {png}")
    out.print(payload, markup=False)
