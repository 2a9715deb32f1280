"""The permission vocabulary and the deprecated ``can_*`` team flags that map onto it.

A legacy flag reads true when every permission it stands for is granted (or the team has all
permissions of that level); writing it true grants those permissions, false revokes them. The
groups are disjoint, so reading back what was written always agrees.
"""

from __future__ import annotations

ORGANIZER_PERMISSIONS: tuple[str, ...] = (
    "organizer.events:create",
    "organizer.settings.general:write",
    "organizer.teams:write",
    "organizer.seatingplans:write",
    "organizer.giftcards:read",
    "organizer.giftcards:write",
    "organizer.customers:read",
    "organizer.customers:write",
    "organizer.reusablemedia:read",
    "organizer.reusablemedia:write",
    "organizer.devices:read",
    "organizer.devices:write",
    "organizer.outgoingmails:read",
)

EVENT_PERMISSIONS: tuple[str, ...] = (
    "event.settings.general:write",
    "event.settings.payment:write",
    "event.settings.tax:write",
    "event.settings.invoicing:write",
    "event.subevents:write",
    "event.items:write",
    "event.orders:read",
    "event.orders:write",
    "event.orders:checkin",
    "event.vouchers:read",
    "event.vouchers:write",
    "event:cancel",
)

# legacy flag -> (level, permissions it stands for)
LEGACY_FLAGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "can_create_events": ("organizer", ("organizer.events:create",)),
    "can_change_teams": ("organizer", ("organizer.teams:write",)),
    "can_change_organizer_settings": (
        "organizer",
        (
            "organizer.settings.general:write",
            "organizer.seatingplans:write",
            "organizer.devices:read",
            "organizer.devices:write",
            "organizer.outgoingmails:read",
        ),
    ),
    "can_manage_customers": (
        "organizer",
        ("organizer.customers:read", "organizer.customers:write"),
    ),
    "can_manage_reusable_media": (
        "organizer",
        ("organizer.reusablemedia:read", "organizer.reusablemedia:write"),
    ),
    "can_manage_gift_cards": (
        "organizer",
        ("organizer.giftcards:read", "organizer.giftcards:write"),
    ),
    "can_change_event_settings": (
        "event",
        (
            "event.settings.general:write",
            "event.settings.payment:write",
            "event.settings.tax:write",
            "event.settings.invoicing:write",
            "event.subevents:write",
        ),
    ),
    "can_change_items": ("event", ("event.items:write",)),
    "can_view_orders": ("event", ("event.orders:read",)),
    "can_change_orders": ("event", ("event.orders:write", "event:cancel")),
    "can_view_vouchers": ("event", ("event.vouchers:read",)),
    "can_change_vouchers": ("event", ("event.vouchers:write",)),
    "can_checkin_orders": ("event", ("event.orders:checkin",)),
}


def legacy_flag(
    flag: str,
    *,
    all_organizer: bool,
    organizer: list[str],
    all_event: bool,
    event: list[str],
) -> bool:
    level, perms = LEGACY_FLAGS[flag]
    if level == "organizer":
        return all_organizer or all(p in organizer for p in perms)
    return all_event or all(p in event for p in perms)


def apply_legacy_flag(flag: str, value: bool, organizer: list[str], event: list[str]) -> None:
    """Grant or revoke the flag's permissions in place, keeping the canonical order."""
    level, perms = LEGACY_FLAGS[flag]
    target = organizer if level == "organizer" else event
    canonical = ORGANIZER_PERMISSIONS if level == "organizer" else EVENT_PERMISSIONS
    current = set(target)
    current = current | set(perms) if value else current - set(perms)
    target[:] = [p for p in canonical if p in current] + sorted(current - set(canonical))
