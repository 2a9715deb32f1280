"""Whether this transaction's order changes mail the buyer (paid, canceled).

The mails themselves belong to the shop (``admit.shop.buyer_mails``: order hooks record what
happened, a job composes the mail with its attachments after the commit). Whether a change
mails the buyer is the caller's decision: the API's ``send_email``, the shop's own pages. A
caller that wants the mails says so with :func:`wanted`, giving the base URL the mail's link
to the order page starts with (a job has no request to take it from). Transactions that say
nothing send nothing (order creation, imports, the CLI).
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

KEY = "buyer_mails_base_url"


def wanted(session: AsyncSession, base_url: str) -> None:
    """The order changes of this transaction mail their buyers."""
    session.info[KEY] = base_url.rstrip("/")


def base_url(session: AsyncSession) -> str | None:
    """The base URL given to :func:`wanted`, or None when no mails are wanted."""
    return session.info.get(KEY)
