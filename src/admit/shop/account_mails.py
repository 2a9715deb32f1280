"""The customer account's mails: "set your password" after signing up, and "a new password"
(forgotten password, or a sign-up with an address that already has an account). In the
customer's language (English or German), text and HTML, stored in the outbox in the request's
own transaction (``mail/outbox.py``): a refused request sends nothing."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from admit.customers import password_links
from admit.mail.outbox import queue_mail
from admit.models import Customer, Organizer
from admit.shop import mails

KINDS = {"setup": password_links.SETUP_HOURS, "reset": password_links.RESET_HOURS}


def link(base_url: str, organizer: Organizer, token: str) -> str:
    return f"{base_url.rstrip('/')}/{organizer.slug}/account/password/{token}/"


async def send_password_link(
    session: AsyncSession,
    secret_key: str,
    base_url: str,
    organizer: Organizer,
    customer: Customer,
    kind: str,
    lang: str,
) -> None:
    """Queues the mail ``kind`` (``setup`` or ``reset``) with a fresh password link."""
    if not customer.email:
        return
    token = password_links.make_token(secret_key, customer, kind)
    context = {
        "lang": (lang or "en").split("-")[0],
        "name": customer.name_cached or customer.email,
        "organizer": organizer.name,
        "hours": KINDS[kind],
        "link": link(base_url, organizer, token),
    }
    subject, text, html = mails.render(context, f"account_{kind}")
    await queue_mail(
        session,
        to=[customer.email],
        subject=subject,
        body=text,
        html=html,
        organizer_id=organizer.id,
    )
