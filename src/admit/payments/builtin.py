"""The providers Admit ships with: ``free`` (nothing to pay), ``banktransfer`` (the buyer
transfers the money with the order code as reference; the organizer confirms it) and
``giftcard`` (the card is debited in the checkout's transaction, through the guarded debit of
``orders/payments.py``, so concurrent checkouts can never take a card below zero)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from admit.events.settings import value
from admit.giftcards import service as cards
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.i18n import localized
from admit.models import Event, GiftCard, Order, OrderPayment
from admit.orders import payments as order_payments
from admit.orders.money_schemas import PaymentIn
from admit.payments.providers import Instructions, Provider, Started, register
from admit.payments.settings import BANKTRANSFER_ENABLED, GIFTCARD_ENABLED

CARD_FIELD = "gift_card"
NO_CREDIT = "This gift card has no credit left."


def money(amount: Decimal, currency: str) -> str:
    return f"{amount:.2f} {currency}"


class Free(Provider):
    """An order whose total is zero is paid the moment it is placed."""

    identifier = "free"
    label = "Free of charge"

    def enabled(self, event: Event) -> bool:
        return True

    def refusal(self, event: Event, total: Decimal) -> str | None:
        return None if total == 0 else "This order is not free."


class BankTransfer(Provider):
    """Pending until the organizer sees the money; the reference is the order code."""

    identifier = "banktransfer"
    label = "Bank transfer"
    takes_fees = True

    def enabled(self, event: Event) -> bool:
        return bool(value(event, BANKTRANSFER_ENABLED))

    def instructions(self, event: Event, order: Order) -> Instructions | None:
        if order.status != "n":
            return None
        details: list[tuple[str, str]] = []
        if value(event, "payment_banktransfer_bank_details_type") == "sepa":
            for key, label in (
                ("payment_banktransfer_bank_details_sepa_name", "Account holder"),
                ("payment_banktransfer_bank_details_sepa_iban", "IBAN"),
                ("payment_banktransfer_bank_details_sepa_bic", "BIC"),
                ("payment_banktransfer_bank_details_sepa_bank", "Bank"),
            ):
                if value(event, key):
                    details.append((label, str(value(event, key))))
        other = localized(value(event, "payment_banktransfer_bank_details"), order.locale)
        if other:
            details.append(("Bank details", other))
        owed = order_payments.owed(order)
        details.append(("Amount", money(owed, event.currency)))
        details.append(("Reference", order.code))
        deadline = order.expires.strftime("%Y-%m-%d")
        text = (
            f"Please transfer {money(owed, event.currency)} by {deadline}, with the reference "
            f"{order.code} so that we can match your payment to your order."
        )
        return Instructions("Please pay by bank transfer", text, details)


class GiftCardProvider(Provider):
    """Pays all it can from a card; a rest is left to bank transfer when that is on."""

    identifier = "giftcard"
    label = "Gift card"
    input_field = CARD_FIELD

    def enabled(self, event: Event) -> bool:
        return bool(value(event, GIFTCARD_ENABLED))

    async def start(
        self,
        session: AsyncSession,
        event: Event,
        order: Order,
        payment: OrderPayment,
        data: dict[str, Any],
    ) -> Started:
        code = str(data.get(CARD_FIELD) or "").strip()
        if not code:
            raise FieldErrors.single(CARD_FIELD, "Enter the code of your gift card.")
        # What the card holds now decides how much it pays; the debit itself is guarded, so
        # a concurrent checkout that took the credit first makes this one fail, never a
        # negative card.
        credit = await session.scalar(
            select(GiftCard.value)
            .where(
                cards.visible(event.organizer_id, True),
                func.lower(GiftCard.secret) == code.lower(),
            )
            .order_by(GiftCard.issuer_id != event.organizer_id, GiftCard.id)
            .limit(1)
        )
        if credit is None:
            raise FieldErrors.single(CARD_FIELD, order_payments.CARD_UNKNOWN)
        if credit <= 0:
            raise FieldErrors.single(CARD_FIELD, NO_CREDIT)
        owed = order_payments.owed(order)
        amount = min(credit, owed)
        rest = owed - amount
        if rest > 0 and not BankTransfer().enabled(event):
            raise FieldErrors.single(
                CARD_FIELD,
                f"This gift card holds {money(credit, event.currency)}, less than the total "
                f"of {money(owed, event.currency)}.",
            )
        entry = PaymentIn(
            state="confirmed",
            amount=amount,
            provider=self.identifier,
            info={"gift_card_secret": code},
        )
        try:
            await order_payments.create(session, event, order, entry)
        except FieldErrors as exc:
            messages = [m for ms in dict(exc.errors).values() for m in ms]
            raise FieldErrors({CARD_FIELD: messages}, status=exc.status) from None
        if rest > 0:
            # The payment the order was written with waits for the rest, by bank transfer.
            payment.provider, payment.amount = BankTransfer.identifier, rest
        else:
            order_payments.cancel(payment)
        return Started(paid=order.status == "p")

    def instructions(self, event: Event, order: Order) -> Instructions | None:
        # A rest is paid by bank transfer (the order's open payment says so).
        return None


FREE = register(Free())
BANKTRANSFER = register(BankTransfer())
GIFTCARD = register(GiftCardProvider())
