"""The mail outbox: messages are stored in the request's transaction, so a rolled-back change
never sends mail, and delivered by the sender afterwards."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import OutgoingMail


def queue_mail(
    session: AsyncSession,
    *,
    to: list[str],
    subject: str,
    body: str,
    organizer_id: int | None = None,
    event_id: int | None = None,
) -> OutgoingMail:
    mail = OutgoingMail(
        to=to, subject=subject, body=body, organizer_id=organizer_id, event_id=event_id
    )
    session.add(mail)
    return mail
