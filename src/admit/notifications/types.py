"""The webhook action types Admit emits (the spec's core types), in canonical form.

Integrations written for the reference say ``pretix.`` where Admit says ``service.``: both
families are accepted (:func:`canonical` maps one to the other for matching). A webhook keeps
the names as its client sent them, and its deliveries carry ``action`` in the family it was
registered with (:func:`in_family`), so a receiver written for the reference sees its names.
"""

from __future__ import annotations

ORDER_ACTIONS = (
    "service.event.order.placed",
    "service.event.order.placed.require_approval",
    "service.event.order.paid",
    "service.event.order.canceled",
    "service.event.order.reactivated",
    "service.event.order.expired",
    "service.event.order.expirychanged",
    "service.event.order.modified",
    "service.event.order.contact.changed",
    "service.event.order.deleted",
    "service.event.order.approved",
    "service.event.order.denied",
    "service.event.order.payment.confirmed",
)
# ``service.event.order.changed.*``: one type per kind of change (positions, fees, ...).
ORDER_CHANGED_PREFIX = "service.event.order.changed."
REFUND_ACTIONS = (
    "service.event.order.refund.created",
    "service.event.order.refund.created.externally",
    "service.event.order.refund.requested",
    "service.event.order.refund.done",
    "service.event.order.refund.canceled",
    "service.event.order.refund.failed",
)
WAITINGLIST_ACTIONS = (
    "service.event.orders.waitinglist.added",
    "service.event.orders.waitinglist.changed",
    "service.event.orders.waitinglist.deleted",
    "service.event.orders.waitinglist.voucher_assigned",
)
CHECKIN_ACTIONS = ("service.event.checkin", "service.event.checkin.reverted")
EVENT_ACTIONS = (
    "service.event.added",
    "service.event.changed",
    "service.event.deleted",
    "service.event.live.activated",
    "service.event.live.deactivated",
    "service.event.testmode.activated",
    "service.event.testmode.deactivated",
)
# ``service.event.item.*``: items (added, changed, deleted, ...).
ITEM_PREFIX = "service.event.item."
GIFTCARD_ACTIONS = ("service.giftcards.created", "service.giftcards.modified")
# ``service.giftcards.transaction.*``: one type per kind of transaction.
GIFTCARD_TRANSACTION_PREFIX = "service.giftcards.transaction."
VOUCHER_ACTIONS = ("service.voucher.added", "service.voucher.changed", "service.voucher.deleted")
SUBEVENT_ACTIONS = (
    "service.subevent.added",
    "service.subevent.changed",
    "service.subevent.deleted",
)
# Admit's own (the spec lets installed plugins add types): a quota's changes, so its history
# in the back office has rows like a product's. Delivered only to webhooks that name them.
QUOTA_ACTIONS = (
    "service.event.quota.added",
    "service.event.quota.changed",
    "service.event.quota.deleted",
)
CUSTOMER_ACTIONS = (
    "service.customer.created",
    "service.customer.changed",
    "service.customer.anonymized",
)

# Every exact type, and the families a trailing ``.*`` names.
ACTION_TYPES: tuple[str, ...] = (
    *ORDER_ACTIONS,
    *REFUND_ACTIONS,
    *WAITINGLIST_ACTIONS,
    *CHECKIN_ACTIONS,
    *EVENT_ACTIONS,
    *GIFTCARD_ACTIONS,
    *VOUCHER_ACTIONS,
    *SUBEVENT_ACTIONS,
    *CUSTOMER_ACTIONS,
    *QUOTA_ACTIONS,
)
PREFIXES: tuple[str, ...] = (ORDER_CHANGED_PREFIX, ITEM_PREFIX, GIFTCARD_TRANSACTION_PREFIX)


SERVICE = "service."
PRETIX = "pretix."
FAMILIES = (SERVICE, PRETIX)


def canonical(action: str) -> str:
    """``pretix.…`` is accepted as an alias of ``service.…``."""
    return SERVICE + action.removeprefix(PRETIX) if action.startswith(PRETIX) else action


def family(action: str) -> str:
    """The family (``pretix.`` or ``service.``) a name as a client sent it is written in."""
    return PRETIX if action.startswith(PRETIX) else SERVICE


def in_family(action: str, prefix: str) -> str:
    """A canonical ``service.…`` name written in ``prefix``'s family."""
    if prefix == PRETIX and action.startswith(SERVICE):
        return PRETIX + action.removeprefix(SERVICE)
    return action


def is_known(action: str) -> bool:
    """An exact core type, or a member of one of the ``.*`` families."""
    return action in ACTION_TYPES or any(
        action.startswith(p) and len(action) > len(p) for p in PREFIXES
    )
