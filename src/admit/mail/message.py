"""The MIME message of an outbox mail: text and HTML as alternatives, files attached.

The From header shows who the mail is about (the event, else the organizer) with the
configured sender address, so recipients recognise it while the address stays one the SMTP
server may send from.
"""

from __future__ import annotations

import email.policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid, parseaddr

from sqlalchemy.ext.asyncio import AsyncSession

from admit.jobs.storage import FileStore, StoredFileMissing
from admit.models import Event, Organizer, OutgoingMail


class BrokenMail(Exception):
    """The mail cannot be built (a lost attachment, a malformed field): it never will be."""


def one_line(value: str) -> str:
    """Header values never carry line breaks (they would start new headers)."""
    return " ".join(value.split())


def sender_address(mail_from: str) -> tuple[str, str]:
    """(display name, address) of ADMIT_MAIL_FROM; a ValueError when it holds no address."""
    name, address = parseaddr(mail_from)
    if "@" not in address:
        raise ValueError(f"ADMIT_MAIL_FROM holds no e-mail address: {mail_from!r}")
    return one_line(name), address


async def sender_name(session: AsyncSession, mail: OutgoingMail) -> str | None:
    if mail.event_id is not None:
        event = await session.get(Event, mail.event_id)
        names = (event.name if event else None) or {}
        name = names.get("en") or next((v for v in names.values() if v), None)
        if name:
            return one_line(name)
    if mail.organizer_id is not None:
        organizer = await session.get(Organizer, mail.organizer_id)
        if organizer and organizer.name:
            return one_line(organizer.name)
    return None


async def _read(store: FileStore, key: str) -> bytes:
    return b"".join([chunk async for chunk in store.open(key)])


async def compose(
    mail: OutgoingMail, *, name: str | None, mail_from: str, store: FileStore
) -> EmailMessage:
    """Raises BrokenMail when the mail itself is at fault."""
    default_name, address = sender_address(mail_from)
    message = EmailMessage(policy=email.policy.SMTP)
    try:
        local, _, domain = address.rpartition("@")
        message["From"] = Address(display_name=name or default_name, username=local, domain=domain)
        message["To"] = ", ".join(mail.to)
        if mail.cc:
            message["Cc"] = ", ".join(mail.cc)
        message["Subject"] = one_line(mail.subject)
        message["Date"] = format_datetime(mail.created)
        message["Message-ID"] = mail.message_id or make_msgid(domain=domain)
        message["Auto-Submitted"] = "auto-generated"
        message.set_content(mail.body)
        if mail.html:
            message.add_alternative(mail.html, subtype="html")
    except (ValueError, TypeError) as exc:
        raise BrokenMail(f"The mail cannot be built: {exc}") from None
    for attachment in mail.attachments or ():
        try:
            data = await _read(store, attachment["key"])
        except StoredFileMissing:
            raise BrokenMail(
                f"The attachment {attachment['filename']} is missing from the file store."
            ) from None
        maintype, _, subtype = attachment["content_type"].partition("/")
        if not (maintype and subtype) or maintype == "multipart":
            maintype, subtype = "application", "octet-stream"
        try:
            message.add_attachment(
                data, maintype=maintype, subtype=subtype, filename=attachment["filename"]
            )
        except (ValueError, TypeError) as exc:
            raise BrokenMail(f"The attachment {attachment['filename']} failed: {exc}") from None
    return message
