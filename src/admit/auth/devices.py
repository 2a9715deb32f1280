"""What a device may do: its fixed permissions and the security profiles that narrow them.

A device is a scanner (or a similar terminal) rather than a person, so its grant is fixed and
small: it reads the events it is limited to, their catalog, orders and positions, and checks
tickets in. It never writes the catalog, orders, vouchers, teams, devices or settings, whatever
its profile says. Team-management and other organizer-level routes need organizer permissions,
of which a device has none.

On top of that, a device's ``security_profile`` names an allow-list of API calls:

``full``
    Everything the permissions above allow.
``pretixscan``
    What a synchronising scanner app needs: organizer, event, subevent and catalog reads,
    order and order-position lists for offline use, check-in lists with their status
    and positions, check-in history, and the check-in calls (redeem, annul, search).
``pretixscan_online_kiosk``
    An unattended online-only scanner: like ``pretixscan`` but without any order, position or
    check-in history download, so a stolen kiosk token cannot dump attendee data.

The ``/api/v1/device/...`` calls (info, update, roll, revoke) are open to every profile.
"""

from __future__ import annotations

from collections.abc import Iterable

from admit.kit.http.routing import API_PREFIX

DEVICE_EVENT_PERMISSIONS: frozenset[str] = frozenset({"event.orders:read", "event.orders:checkin"})
DEVICE_ORGANIZER_PERMISSIONS: frozenset[str] = frozenset()

DEFAULT_PROFILE = "full"

_O = "/organizers/{organizer}"
_E = _O + "/events/{event}"

# (method, route path without the /api/v1 prefix)
_CATALOG_READS: tuple[tuple[str, str], ...] = (
    ("GET", "/organizers/"),
    ("GET", _O + "/"),
    ("GET", _O + "/events/"),
    ("GET", _E + "/"),
    ("GET", _O + "/subevents/"),
    ("GET", _E + "/subevents/"),
    ("GET", _E + "/subevents/{id}/"),
    ("GET", _E + "/categories/"),
    ("GET", _E + "/categories/{id}/"),
    ("GET", _E + "/items/"),
    ("GET", _E + "/items/{id}/"),
    ("GET", _E + "/items/{item}/variations/"),
    ("GET", _E + "/items/{item}/variations/{id}/"),
    ("GET", _E + "/questions/"),
    ("GET", _E + "/questions/{id}/"),
    ("GET", _E + "/questions/{question}/options/"),
)

# The check-in routes (built in admit.checkin); the access test checks these exist once that
# router is mounted.
CHECKIN_CALLS: tuple[tuple[str, str], ...] = (
    ("GET", _E + "/checkinlists/"),
    ("GET", _E + "/checkinlists/{id}/"),
    ("GET", _E + "/checkinlists/{id}/status/"),
    ("POST", _O + "/checkinrpc/redeem/"),
    ("POST", _O + "/checkinrpc/annul/"),
)
CHECKIN_DOWNLOADS: tuple[tuple[str, str], ...] = (
    ("GET", _E + "/checkinlists/{id}/positions/"),
    ("GET", _E + "/checkinlists/{list}/positions/{id}/"),
    ("GET", _E + "/checkins/"),
    ("GET", _O + "/checkinrpc/search/"),
)

_ORDER_DOWNLOADS: tuple[tuple[str, str], ...] = (
    ("GET", _E + "/orders/"),
    ("GET", _E + "/orders/{code}/"),
    ("GET", _O + "/orders/"),
    ("GET", _E + "/orderpositions/"),
    ("GET", _E + "/orderpositions/{id}/"),
)


def _routes(*groups: Iterable[tuple[str, str]]) -> frozenset[tuple[str, str]]:
    return frozenset((method, API_PREFIX + path) for group in groups for method, path in group)


# None: no allow-list beyond the device permissions.
SECURITY_PROFILES: dict[str, frozenset[tuple[str, str]] | None] = {
    "full": None,
    "pretixscan": _routes(_CATALOG_READS, CHECKIN_CALLS, CHECKIN_DOWNLOADS, _ORDER_DOWNLOADS),
    "pretixscan_online_kiosk": _routes(_CATALOG_READS, CHECKIN_CALLS),
}

DEVICE_SELF_PREFIX = API_PREFIX + "/device/"


def profile_allows(profile: str, method: str, route_path: str) -> bool:
    """Whether a device with ``profile`` may call ``method route_path`` (a route template)."""
    if route_path.startswith(DEVICE_SELF_PREFIX):
        return True
    allowed = SECURITY_PROFILES.get(profile, frozenset())  # an unknown profile allows nothing
    if allowed is None:
        return True
    if method == "HEAD":
        method = "GET"
    return (method, route_path) in allowed
