"""The mail outbox: a message is stored together with the ``mail.send`` job that delivers it,
in the transaction of the change it is about, so a rolled-back change never sends mail and a
committed one always does (once an SMTP server is configured, see :mod:`admit.mail.tasks`)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from email.utils import make_msgid, parseaddr
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from admit.jobs.storage import check_key
from admit.mail.tasks import enqueue_delivery
from admit.models import OutgoingMail


@functools.cache
def message_id_domain() -> str:
    """The domain of the sender address (ADMIT_MAIL_FROM): receivers trust Message-IDs from
    the sender's own domain more."""
    from admit.config import Settings

    address = parseaddr(Settings().mail_from)[1]
    return address.rpartition("@")[2] or "localhost"


def _attachments(attachments: Sequence[dict[str, Any]] | None) -> list[dict[str, str]]:
    """Checked now, so a bad one fails the request that made it rather than the delivery."""
    checked = []
    for attachment in attachments or ():
        checked.append(
            {
                "key": check_key(str(attachment["key"])),
                "filename": str(attachment["filename"]),
                "content_type": str(attachment.get("content_type") or "application/octet-stream"),
            }
        )
    return checked


async def queue_mail(
    session: AsyncSession,
    *,
    to: list[str],
    subject: str,
    body: str,
    html: str | None = None,
    cc: list[str] | None = None,
    bcc: list[str] | None = None,
    attachments: Sequence[dict[str, Any]] | None = None,
    organizer_id: int | None = None,
    event_id: int | None = None,
    order_id: int | None = None,
    position_id: int | None = None,
) -> OutgoingMail:
    """Stores the mail and its delivery job in the session's transaction.

    ``attachments`` are files already in the file store: ``{"key", "filename",
    "content_type"}``; they must stay there until the mail was sent. ``order_id`` (and
    ``position_id``) name the order a mail is about: its page in the back office lists it."""
    mail = OutgoingMail(
        to=list(to),
        cc=list(cc or ()),
        bcc=list(bcc or ()),
        subject=subject,
        body=body,
        html=html,
        attachments=_attachments(attachments),
        organizer_id=organizer_id,
        event_id=event_id,
        order_id=order_id,
        position_id=position_id,
        status="queued",
        attempts=0,
        message_id=make_msgid(domain=message_id_domain()),
    )
    session.add(mail)
    await session.flush()
    await enqueue_delivery(session, mail)
    return mail
