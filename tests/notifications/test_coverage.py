"""Every action type has a producer and a test that sees it recorded, or a stated reason why
Admit does not record it. Adding a type to ``admit.notifications.types`` (or a family member
to ``admit.notifications.notify``) without a line here fails."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

from admit.notifications import notify, types

ORDERS = "tests.notifications.test_orders"
RESOURCES = "tests.notifications.test_event_resources"
ORGANIZER = "tests.notifications.test_organizer_resources"
CHECKIN = "tests.checkin"
REFUNDS = "tests.orders.test_refunds::test_refunds_recorded_by_hand"
CHANGES = "tests.orders.test_change_notify"

# action type -> "module::test" that performs the operation and asserts the row, or
# "not produced: <reason>".
PRODUCERS: dict[str, str] = {
    "service.event.order.placed": f"{ORDERS}::test_order_placed",
    "service.event.order.placed.require_approval": f"{ORDERS}::test_order_placed",
    "service.event.order.paid": f"{ORDERS}::test_order_state_actions",
    "service.event.order.canceled": f"{ORDERS}::test_order_state_actions",
    "service.event.order.reactivated": f"{ORDERS}::test_order_state_actions",
    "service.event.order.expired": f"{ORDERS}::test_order_state_actions",
    "service.event.order.expirychanged": f"{ORDERS}::test_order_state_actions",
    "service.event.order.modified": f"{ORDERS}::test_order_patch_and_delete",
    "service.event.order.contact.changed": f"{ORDERS}::test_order_patch_and_delete",
    "service.event.order.deleted": f"{ORDERS}::test_order_patch_and_delete",
    "service.event.order.approved": f"{ORDERS}::test_order_approval",
    "service.event.order.denied": f"{ORDERS}::test_order_approval",
    "service.event.order.payment.confirmed": f"{ORDERS}::test_order_state_actions",
    "service.event.order.changed.cancel": f"{ORDERS}::test_order_position_changes",
    "service.event.order.changed.secret": f"{ORDERS}::test_order_position_changes",
    "service.event.order.changed.validity": f"{ORDERS}::test_order_position_changes",
    "service.event.order.changed.blocked": f"{ORDERS}::test_order_position_changes",
    "service.event.order.changed.item": f"{CHANGES}::test_order_change_types",
    "service.event.order.changed.price": f"{CHANGES}::test_order_change_types",
    "service.event.order.changed.tax_rule": f"{CHANGES}::test_order_change_types",
    "service.event.order.changed.add": f"{CHANGES}::test_order_change_types",
    "service.event.order.changed.feevalue": f"{CHANGES}::test_order_change_types",
    "service.event.order.changed.cancelfee": f"{CHANGES}::test_order_change_types",
    "service.event.order.changed.recalculate_taxes": f"{CHANGES}::test_order_change_types",
    "service.event.order.changed.split": f"{CHANGES}::test_order_change_types",
    "service.event.order.changed.split_from": f"{CHANGES}::test_order_change_types",
    "service.event.order.changed.subevent": f"{CHANGES}::test_subevent_and_seat_change_types",
    "service.event.order.changed.seat": f"{CHANGES}::test_seat_change_type",
    "service.event.order.refund.created": REFUNDS,
    "service.event.order.refund.created.externally": REFUNDS,
    "service.event.order.refund.requested": (
        "not produced: Admit has no shop in which a buyer requests a refund"
    ),
    "service.event.order.refund.done": REFUNDS,
    "service.event.order.refund.canceled": REFUNDS,
    "service.event.order.refund.failed": REFUNDS,
    "service.event.orders.waitinglist.added": f"{ORGANIZER}::test_waitinglist_life_cycle",
    "service.event.orders.waitinglist.changed": f"{ORGANIZER}::test_waitinglist_life_cycle",
    "service.event.orders.waitinglist.deleted": f"{ORGANIZER}::test_waitinglist_life_cycle",
    "service.event.orders.waitinglist.voucher_assigned": (
        f"{ORGANIZER}::test_waitinglist_life_cycle"
    ),
    # The checkins table is the outbox of successful check-ins (no notification row).
    "service.event.checkin": f"{CHECKIN}.test_redeem::test_first_entry_is_ok_then_already_redeemed",
    "service.event.checkin.reverted": (
        f"{CHECKIN}.test_annul_history::test_device_scans_record_device_and_gate_and_annul"
    ),
    "service.event.added": f"{RESOURCES}::test_event_life_cycle",
    "service.event.changed": f"{RESOURCES}::test_event_life_cycle",
    "service.event.deleted": f"{RESOURCES}::test_event_life_cycle",
    "service.event.live.activated": f"{RESOURCES}::test_event_life_cycle",
    "service.event.live.deactivated": f"{RESOURCES}::test_event_life_cycle",
    "service.event.testmode.activated": f"{RESOURCES}::test_event_life_cycle",
    "service.event.testmode.deactivated": f"{RESOURCES}::test_event_life_cycle",
    "service.event.item.added": f"{RESOURCES}::test_item_life_cycle",
    "service.event.item.changed": f"{RESOURCES}::test_item_life_cycle",
    "service.event.item.deleted": f"{RESOURCES}::test_item_life_cycle",
    "service.giftcards.created": f"{ORGANIZER}::test_giftcard_life_cycle",
    "service.giftcards.modified": f"{ORGANIZER}::test_giftcard_life_cycle",
    "service.giftcards.transaction.manual": f"{ORGANIZER}::test_giftcard_life_cycle",
    "service.voucher.added": f"{RESOURCES}::test_voucher_life_cycle",
    "service.voucher.changed": f"{RESOURCES}::test_voucher_life_cycle",
    "service.voucher.deleted": f"{RESOURCES}::test_voucher_life_cycle",
    "service.subevent.added": f"{RESOURCES}::test_subevent_life_cycle",
    "service.subevent.changed": f"{RESOURCES}::test_subevent_life_cycle",
    "service.subevent.deleted": f"{RESOURCES}::test_subevent_life_cycle",
    "service.event.quota.added": f"{RESOURCES}::test_quota_life_cycle",
    "service.event.quota.changed": f"{RESOURCES}::test_quota_life_cycle",
    "service.event.quota.deleted": f"{RESOURCES}::test_quota_life_cycle",
    "service.customer.created": f"{ORGANIZER}::test_customer_life_cycle",
    "service.customer.changed": f"{ORGANIZER}::test_customer_life_cycle",
    "service.customer.anonymized": f"{ORGANIZER}::test_customer_life_cycle",
}

# The members of the ``.*`` families Admit records (declared in notify.py).
FAMILY_MEMBERS = {
    types.ORDER_CHANGED_PREFIX: notify.ORDER_CHANGED_ACTIONS,
    types.ITEM_PREFIX: notify.ITEM_ACTIONS,
    types.GIFTCARD_TRANSACTION_PREFIX: notify.GIFTCARD_TRANSACTION_ACTIONS,
}


def test_every_type_has_a_producer_test_or_a_reason():
    members = {m for family in FAMILY_MEMBERS.values() for m in family}
    assert set(FAMILY_MEMBERS) == set(types.PREFIXES)
    for prefix, family in FAMILY_MEMBERS.items():
        assert family and all(m.startswith(prefix) for m in family), prefix
    expected = set(types.ACTION_TYPES) | members
    assert sorted(expected - set(PRODUCERS)) == [], "types without a producer entry"
    assert sorted(set(PRODUCERS) - expected) == [], "entries for types nobody declares"
    for action, where in PRODUCERS.items():
        assert types.is_known(action), action
        if where.startswith("not produced: "):
            continue
        module, _, name = where.partition("::")
        test = getattr(importlib.import_module(module), name, None)
        assert test is not None, f"{action}: {where} does not exist"
        # The test names the type it checks (it asserts the recorded row).
        assert action in inspect.getsource(test), f"{action} is not asserted in {where}"


def test_types_named_in_the_code_are_known():
    """A typo in a producer's literal fails here, before a request would fail on it."""
    source = Path(notify.__file__).resolve().parents[1]
    for path in source.rglob("*.py"):
        for literal in re.findall(r'"(service\.[a-z_.]+)"', path.read_text()):
            assert literal.endswith(".") or types.is_known(literal), (path, literal)
