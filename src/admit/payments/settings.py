"""The payment keys the providers need beyond the core ones (``events/settings.py`` already has
bank transfer's keys and the payment term): gift cards as a means of payment in the shop."""

from __future__ import annotations

from admit.events.settings import EVENT_SETTINGS, PAYMENT
from admit.kit.resources.settings import Setting

GIFTCARD_ENABLED = "payment_giftcard__enabled"
BANKTRANSFER_ENABLED = "payment_banktransfer__enabled"

EVENT_SETTINGS.register(
    Setting(
        key=GIFTCARD_ENABLED,
        annotation=bool,
        default=True,
        label="Accept gift cards in the shop",
        permission=PAYMENT,
    ),
)
