"""The buyer's mail after a checkout: order placed (with how to pay) or, when the checkout
paid it at once, complete (with the link to the tickets). Stored in the outbox in the
checkout's own transaction (``mail/outbox.py``): a refused checkout sends nothing, a placed
order's mail is sent once even if the server stops right after the commit."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from sqlalchemy.ext.asyncio import AsyncSession

from admit.events.settings import value
from admit.kit.resources.i18n import localized
from admit.mail.outbox import queue_mail
from admit.models import Event, Order

_loader = PackageLoader("admit.shop", "mail")
# The templates ship with the package: no stat of each file at every mail (``auto_reload``).
_text = Environment(loader=_loader, autoescape=False, undefined=StrictUndefined, auto_reload=False)
_html = Environment(
    loader=_loader,
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,
)


def render(context: dict[str, Any], name: str = "order") -> tuple[str, str, str]:
    """(subject, text, html) of the mail ``name`` (``order``, ``paid``, ``canceled``), in the
    context's ``lang``: German (``<name>.de.*``) or English."""
    if context.get("lang") == "de":
        name = f"{name}.de"
    subject = " ".join(_text.get_template(f"{name}.subject.txt").render(context).split())
    text = _text.get_template(f"{name}.txt").render(context)
    html = _html.get_template(f"{name}.html").render(context, subject=subject)
    return subject, text, html


def context(
    event: Event, order: Order, link: str, instructions: Any, positions: list[str]
) -> dict[str, Any] | None:
    """What the order mail is rendered from (None: the order has no address to write to);
    the checkout's fast lane renders the same mail (``checkout_lane.py``)."""
    if not order.email:
        return None
    return {
        "code": order.code,
        "lang": (order.locale or "en").split("-")[0],
        "event": localized(event.name, order.locale),
        "organizer": getattr(event, "organizer_name", ""),
        "contact": value(event, "contact_mail"),
        "paid": order.status == "p",
        "total": f"{order.total:.2f}",
        "currency": event.currency,
        "expires": order.expires.strftime("%Y-%m-%d"),
        "instructions": instructions,
        "positions": positions,
        "link": link,
    }


async def order_mail(
    session: AsyncSession,
    event: Event,
    order: Order,
    link: str,
    instructions: Any,
    positions: list[str],
) -> None:
    found = context(event, order, link, instructions, positions)
    if found is None:
        return
    subject, text, html = render(found)
    await queue_mail(
        session,
        to=[order.email],
        subject=subject,
        body=text,
        html=html,
        organizer_id=event.organizer_id,
        event_id=event.id,
        order_id=order.id,
    )
