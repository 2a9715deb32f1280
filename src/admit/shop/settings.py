"""The shop's event settings, registered in the event settings registry (``E/settings/``).

The core registry already has what the reference names for the buyer's side (attendee names
and e-mails asked/required, ``cancel_allow_user``, ``contact_mail``, ``imprint_url``,
``frontpage_text``, the payment term that is a pending order's expiry, the bank details);
these are the keys the shop adds (the last two as the reference names them).
"""

from __future__ import annotations

from typing import Any

from admit.events.settings import EVENT_SETTINGS, GENERAL, I18n, Url, value
from admit.kit.resources.schema import DateTime
from admit.kit.resources.settings import Setting
from admit.models import Event

SHOP_OPEN = "shop_open"
TERMS_URL = "terms_url"
SUCCESS_TEXT = "checkout_success_text"
CHECKOUT_TEXT = "checkout_text"
# Until when buyers change attendee names and answers on the order page (none: always), and
# whether a checked-in ticket still may be changed: the reference's keys.
MODIFY_UNTIL = "last_order_modification_date"
MODIFY_AFTER_CHECKIN = "allow_modifications_after_checkin"


def _general(key: str, annotation: Any, default: Any, label: str) -> Setting:
    return Setting(key=key, annotation=annotation, default=default, label=label, permission=GENERAL)


EVENT_SETTINGS.register(
    _general(SHOP_OPEN, bool, True, "The shop sells (while the event is live)"),
    _general(TERMS_URL, Url | None, None, "Terms of sale (buyers accept them at checkout)"),
    _general(CHECKOUT_TEXT, I18n, {}, "Text above the checkout form"),
    _general(SUCCESS_TEXT, I18n, {}, "Text on the order page once an order is placed"),
    _general(MODIFY_UNTIL, DateTime | None, None, "Last date of modifications"),
    _general(
        MODIFY_AFTER_CHECKIN,
        bool,
        False,
        "Allow customers to modify their information after they checked in",
    ),
)


def setting(event: Event, key: str) -> Any:
    return value(event, key)
