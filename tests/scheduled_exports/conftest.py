"""Fixtures for scheduled exports: two exporters registered for these tests only (the real
ones are tested with their package), a stand-in for OAuth that authenticates as a user, and
the SMTP mailbox of the mail tests."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any, Literal

import pytest
from sqlalchemy import select

from admit.auth.owners import current_principal
from admit.exports.base import EVENT, ORGANIZER, REGISTRY, Exporter, ExportInput, ExportRun
from admit.exports.formats import table_file
from admit.exports.tables import XLSX_TYPE
from admit.kit.http.context import unauthenticated
from admit.models import Event, Quota, ScheduledExport, User
from tests.factories import Factory, World
from tests.mail.conftest import mailbox, smtp  # noqa: F401

E = "/api/v1/organizers/acme/events/summit/scheduled_exports/"
O = "/api/v1/organizers/acme/scheduled_exports/"  # noqa: E741
DAILY = "DTSTART:20250101T000000\nRRULE:FREQ=DAILY"


class QuotaInput(ExportInput):
    format: Literal["csv", "xlsx"] = "csv"
    min_size: int = 0


class QuotaList(Exporter):
    """The event's quotas (name, size): data a test can compare the file with."""

    identifier = "test_quotas"
    verbose_name = "Quotas (test)"
    level = EVENT
    permission = "event.orders:read"
    Input = QuotaInput

    async def export(self, run: ExportRun) -> None:
        quotas = await run.session.execute(
            select(Quota.name, Quota.size)
            .where(Quota.event_id == run.event_id, Quota.size >= run.params.min_size)
            .order_by(Quota.id)
        )
        kind = run.params.format
        content_type = "text/csv" if kind == "csv" else XLSX_TYPE
        async with run.result_file(f"quotas.{kind}", content_type) as handle:
            table = table_file(kind, handle)
            sheet = table.sheet("Quotas", ["Name", "Size"])
            for name, size in quotas:
                sheet.row([name, size])
            table.close()


class EventList(Exporter):
    """Organizer level: the events the owner may read orders of (name slug per line)."""

    identifier = "test_events"
    verbose_name = "Events (test)"
    level = ORGANIZER
    permission = "event.orders:read"

    async def export(self, run: ExportRun) -> None:
        slugs = await run.session.scalars(
            select(Event.slug).where(Event.id.in_(run.event_ids)).order_by(Event.slug)
        )
        async with run.result_file("events.csv", "text/csv") as handle:
            table = table_file("csv", handle)
            sheet = table.sheet("Events", ["Slug"])
            for slug in slugs:
                sheet.row([slug])
            table.close()


class VoucherOnly(Exporter):
    """An exporter that needs a permission other than reading orders."""

    identifier = "test_vouchers"
    verbose_name = "Vouchers (test)"
    level = EVENT
    permission = "event.vouchers:read"

    async def export(self, run: ExportRun) -> None:
        async with run.result_file("vouchers.csv", "text/csv") as handle:
            handle.write(b"code\r\n")


class Broken(Exporter):
    """Fails with an unexpected error every time."""

    identifier = "test_broken"
    verbose_name = "Broken (test)"
    level = EVENT

    async def export(self, run: ExportRun) -> None:
        raise RuntimeError("disk on fire")


TEST_EXPORTERS = (QuotaList, EventList, VoucherOnly, Broken)


@pytest.fixture(autouse=True)
def test_exporters() -> Iterator[None]:
    from admit.exports.lookup import load_exporters

    load_exporters()
    added = []
    for cls in TEST_EXPORTERS:
        key = (cls.level, cls.identifier)
        if key not in REGISTRY:
            REGISTRY[key] = cls()
            added.append(key)
    yield
    for key in added:
        REGISTRY.pop(key, None)


@pytest.fixture
def as_user(clean_app) -> Iterator[Callable[[User], dict[str, str]]]:
    """Until OAuth exists: ``Authorization: TestUser <id>`` authenticates as that user, with
    the principal an OAuth token of theirs will have (kind ``oauth``, their teams)."""
    original = clean_app.state.authenticator

    async def authenticator(request: Any, session: Any) -> Any:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        if scheme == "TestUser":
            principal = await current_principal(session, "oauth", int(value))
            if principal is None:
                raise unauthenticated("Invalid token.")
            return principal
        return await original(request, session)

    clean_app.state.authenticator = authenticator
    try:
        yield lambda user: {"Authorization": f"TestUser {user.id}"}
    finally:
        clean_app.state.authenticator = original


async def member(
    factory: Factory,
    world: World,
    *,
    event_permissions: list[str] = ("event.orders:read",),  # type: ignore[assignment]
    organizer_permissions: list[str] = (),  # type: ignore[assignment]
    email: str | None = None,
) -> User:
    """A user in a team of ``world.org`` with these permissions for all its events."""
    user = await factory.user(email)
    await factory.team(
        world.org,
        event_permissions=list(event_permissions),
        organizer_permissions=list(organizer_permissions),
        members=[user],
    )
    return user


def body(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "export_identifier": "test_quotas",
        "export_form_data": {"format": "csv"},
        "locale": "en",
        "mail_additional_recipients": "",
        "mail_additional_recipients_cc": "",
        "mail_additional_recipients_bcc": "",
        "mail_subject": "Quotas",
        "mail_template": "Here are the quotas.",
        "schedule_rrule": DAILY,
        "schedule_rrule_time": "09:00:00",
    }
    data.update(overrides)
    return data


async def add_export(app: Any, owner: User, event: Event | None, **values: Any) -> int:
    """A scheduled export written straight to the database; returns its id."""
    values.setdefault("export_identifier", "test_quotas" if event else "test_events")
    values.setdefault("export_form_data", {"format": "csv"} if event else {})
    values.setdefault("mail_subject", "Export")
    values.setdefault("mail_template", "Attached.")
    values.setdefault("schedule_rrule", DAILY)
    values.setdefault("schedule_rrule_time", dt.time(9))
    values.setdefault("schedule_next_run", dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
    async with app.state.db.sessionmaker() as session:
        organizer_id = event.organizer_id if event else values.pop("organizer_id")
        row = ScheduledExport(
            organizer_id=organizer_id,
            event_id=event.id if event else None,
            owner_id=owner.id,
            **values,
        )
        session.add(row)
        await session.commit()
        return row.id


async def export_row(app: Any, export_id: int) -> ScheduledExport:
    async with app.state.db.sessionmaker() as session:
        row = await session.get(ScheduledExport, export_id)
        assert row is not None
        return row
