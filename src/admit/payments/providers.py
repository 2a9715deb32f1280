"""The payment provider interface and its registry.

Why an interface: the shop's pages, the headless checkout and (next) the API's payments and
refunds must agree on what a method is, when it may be offered, what it does once the order
is written and what the buyer is told. A provider answers exactly those questions; the order
code never branches on a provider's name.

The life of a payment: the order is written with one payment row in state ``created`` for
the chosen provider (``orders/create.py``), then :meth:`Provider.start` runs in the same
transaction. An offline provider (bank transfer) leaves the payment waiting and gives the
buyer :meth:`Provider.instructions`; an immediate one (a gift card) confirms it there; an
online card provider returns :class:`Started` with a ``redirect_url`` to send the buyer to,
and later confirms the payment from its webhook (:meth:`Provider.webhook`, routed by
``POST /api/v1/public/payments/{provider}/webhook/``), with the same
``orders.payments.confirm`` every other path uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from admit.models import Event, Order, OrderPayment
from admit.payments import fees


@dataclass
class Instructions:
    """What the buyer must do (shown on the order page and in the order mail)."""

    title: str
    text: str
    details: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Started:
    """What :meth:`Provider.start` did: ``redirect_url`` sends the buyer to an outside payment
    page (online providers); ``paid`` says the order is settled already."""

    paid: bool = False
    redirect_url: str | None = None


class WebhookRefused(Exception):
    """A webhook call that the provider does not accept (unknown, badly signed)."""


class Provider:
    """One means of payment. Subclasses set ``identifier`` and ``label`` and override what
    differs; the defaults describe an offline method that needs no input."""

    identifier: str = ""
    label: str = ""
    # The buyer types something for it (a gift card code): the field the checkout asks for.
    input_field: str | None = None
    # The organizer may charge a fee for it: ``payment_<identifier>__fee_*`` (``fees.py``).
    takes_fees: bool = False

    def enabled(self, event: Event) -> bool:
        """Whether the organizer switched the method on for this event."""
        raise NotImplementedError

    def refusal(self, event: Event, total: Decimal) -> str | None:
        """Why the method cannot pay an order of ``total`` (None: it can)."""
        return None if total > 0 else "Nothing to pay: this order is free."

    async def start(
        self,
        session: AsyncSession,
        event: Event,
        order: Order,
        payment: OrderPayment,
        data: dict[str, Any],
    ) -> Started:
        """Runs right after the order was written, in its transaction (``order`` locked, its
        payments loaded). Raises ``FieldErrors`` to refuse the whole checkout."""
        return Started(paid=order.status == "p")

    def instructions(self, event: Event, order: Order) -> Instructions | None:
        """What a buyer of a pending order must do, or None."""
        return None

    async def webhook(self, session: AsyncSession, body: bytes, headers: dict[str, str]) -> None:
        """A notification from the provider's service; offline methods get none."""
        raise WebhookRefused(f"The payment method {self.identifier!r} takes no webhooks.")


PROVIDERS: dict[str, Provider] = {}


def register(provider: Provider) -> Provider:
    if not provider.identifier or provider.identifier in PROVIDERS:
        raise ValueError(f"payment provider {provider.identifier!r} is registered twice or unnamed")
    PROVIDERS[provider.identifier] = provider
    if provider.takes_fees:
        fees.register_settings(provider.identifier)
    return provider


def get(identifier: str) -> Provider | None:
    return PROVIDERS.get(identifier)


def offered(event: Event, total: Decimal) -> list[Provider]:
    """The methods a buyer may choose for an order of ``total``, in registration order."""
    return [p for p in PROVIDERS.values() if p.enabled(event) and p.refusal(event, total) is None]
