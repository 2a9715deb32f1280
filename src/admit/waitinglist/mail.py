"""The mail a waiting person gets with their voucher: the code, until when it holds, and a link
to the shop that opens with the voucher applied (the front page's ``?voucher=``; a series date's
own page for an entry of a date), in the entry's language (German or English).

The link needs the public base URL: the API's ``send_voucher`` takes it from its request, the
periodic assignment from ``ADMIT_BASE_URL``; without one the mail carries the code alone.
"""

from __future__ import annotations

import zoneinfo
from urllib.parse import quote

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.events.settings import value
from admit.kit.resources.i18n import localized
from admit.mail.outbox import queue_mail
from admit.mail.render import render_mail
from admit.models import Event, Item, ItemVariation, Organizer, Voucher, WaitingListEntry

TEMPLATE = "waitinglist_voucher"


async def shop_link(
    session: AsyncSession, event: Event, entry: WaitingListEntry, code: str, base_url: str | None
) -> str | None:
    """The shop page (the entry's date for a series) with the voucher applied."""
    if not base_url:
        return None
    slug = await session.scalar(select(Organizer.slug).where(Organizer.id == event.organizer_id))
    date = f"{entry.subevent_id}/" if entry.subevent_id else ""
    return f"{base_url.rstrip('/')}/{slug}/{event.slug}/{date}?voucher={quote(code)}"


async def _product(session: AsyncSession, entry: WaitingListEntry, locale: str) -> str:
    name = localized(
        await session.scalar(select(Item.name).where(Item.id == entry.item_id)), locale
    )
    if entry.variation_id:
        variation = await session.scalar(
            select(ItemVariation.value).where(ItemVariation.id == entry.variation_id)
        )
        name = f"{name} – {localized(variation, locale)}"
    return name


async def queue_voucher_mail(
    session: AsyncSession,
    event: Event,
    entry: WaitingListEntry,
    voucher: Voucher,
    base_url: str | None,
) -> None:
    """Stores the mail in the outbox in the caller's transaction: a rolled-back assignment
    mails nothing."""
    locale = entry.locale or value(event, "locale") or "en"
    german = locale.split("-")[0].lower() == "de"
    tz = zoneinfo.ZoneInfo(event.timezone or "UTC")
    until = ""
    if voucher.valid_until is not None:
        local = voucher.valid_until.astimezone(tz)
        until = local.strftime("%d.%m.%Y %H:%M" if german else "%Y-%m-%d %H:%M")
        until = f"{until} ({event.timezone or 'UTC'})"
    subject, text, html = render_mail(
        f"{TEMPLATE}.de" if german else TEMPLATE,
        name=entry.name_cached,
        event=localized(event.name, locale) or event.slug,
        product=await _product(session, entry, locale),
        code=voucher.code,
        until=until,
        link=await shop_link(session, event, entry, voucher.code, base_url),
        contact=value(event, "contact_mail"),
    )
    await queue_mail(
        session,
        to=[entry.email],
        subject=subject,
        body=text,
        html=html,
        organizer_id=event.organizer_id,
        event_id=event.id,
    )
