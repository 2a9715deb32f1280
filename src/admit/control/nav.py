"""What every back-office page shows around its content: the organizer and event switcher,
the event's menu (only the entries the user may open), the event's name, dates and mode."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from admit.checkin.access import READ as CHECKIN_READ
from admit.control.access import principal_of
from admit.control.render import text_of
from admit.kit.http.context import EventContext, OrgContext
from admit.models import Event, Organizer
from admit.web.page import Page

ORDERS_READ = "event.orders:read"
ORDERS_WRITE = "event.orders:write"
SETTINGS_WRITE = "event.settings.general:write"
ITEMS_WRITE = "event.items:write"
TAX_WRITE = "event.settings.tax:write"
VOUCHERS_READ = "event.vouchers:read"


@dataclass
class MenuEntry:
    key: str
    label: str
    url: str


@dataclass
class Nav:
    organizers: list[dict[str, Any]]
    organizer: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    event: dict[str, Any] | None = None
    menu: list[MenuEntry] = field(default_factory=list)
    active: str = ""
    may_create: bool = False


def event_url(organizer: str, event: str) -> str:
    return f"/control/event/{organizer}/{event}/"


async def user_organizers(page: Page) -> list[dict[str, Any]]:
    """The organizers the user's teams belong to, by name."""
    principal = await principal_of(page)
    ids = sorted(principal.organizer_ids)
    if not ids:
        return []
    rows = await page.session.execute(
        select(Organizer.slug, Organizer.name).where(Organizer.id.in_(ids)).order_by(Organizer.name)
    )
    return [
        {"slug": slug, "name": name, "url": f"/control/organizer/{slug}/"} for slug, name in rows
    ]


async def organizer_events(ctx: OrgContext) -> list[dict[str, Any]]:
    """The organizer's events this user may see (all, or those their teams are limited to)."""
    query = select(
        Event.slug, Event.name, Event.date_from, Event.date_to, Event.live, Event.testmode
    ).where(Event.organizer_id == ctx.organizer_id)
    allowed = ctx.accessible_event_ids()
    if allowed is not None:
        query = query.where(Event.id.in_(sorted(allowed)))
    rows = await ctx.session.execute(query.order_by(Event.date_from.desc(), Event.id))
    return [
        {
            "slug": slug,
            "name": text_of(name),
            "date_from": date_from,
            "date_to": date_to,
            "mode": mode_of(live, testmode),
            "url": event_url(ctx.organizer_slug, slug),
        }
        for slug, name, date_from, date_to, live, testmode in rows
    ]


def mode_of(live: bool, testmode: bool) -> str:
    """How the shop stands: live, in test mode, or not yet live (offline)."""
    if testmode:
        return "test mode"
    return "live" if live else "offline"


def event_menu(ctx: EventContext) -> list[MenuEntry]:
    """The event's pages this user may open, by the same permissions their routes check."""
    base = event_url(ctx.organizer_slug, ctx.event.slug)
    eid = ctx.event.id
    entries = []
    if ctx.has_event_permission(eid, ORDERS_READ):
        entries.append(MenuEntry("dashboard", "Dashboard", base))
        entries.append(MenuEntry("orders", "Orders", base + "orders/"))
    if any(ctx.has_event_permission(eid, p) for p in CHECKIN_READ):
        entries.append(MenuEntry("checkin", "Check-in", base + "checkin/"))
    entries.append(MenuEntry("products", "Products", base + "products/"))
    entries.append(MenuEntry("quotas", "Quotas", base + "quotas/"))
    for key, label, permission in CATALOG_MENU:
        if ctx.has_event_permission(eid, permission):
            entries.append(MenuEntry(key, label, f"{base}{key}/"))
    entries.append(MenuEntry("exports", "Exports", base + "exports/"))
    if ctx.has_event_permission(eid, SETTINGS_WRITE):
        entries.append(MenuEntry("settings", "Settings", base + "settings/"))
        entries.append(MenuEntry("live", "Shop status", base + "live/"))
    return entries


# Catalog pages needing a permission to be listed (key = the URL's part).
CATALOG_MENU = (
    ("categories", "Categories", ITEMS_WRITE),
    ("questions", "Questions", ITEMS_WRITE),
    ("discounts", "Discounts", ITEMS_WRITE),
    ("taxrules", "Tax rules", TAX_WRITE),
    ("vouchers", "Vouchers", VOUCHERS_READ),
)


# The organizer's pages needing an organizer permission to be listed (key = the URL's part).
ORGANIZER_MENU = (
    ("devices", "Devices", "organizer.devices:read"),
    ("webhooks", "Webhooks", "organizer.settings.general:write"),
    ("teams", "Teams", "organizer.teams:write"),
    ("giftcards", "Gift cards", "organizer.giftcards:read"),
    ("customers", "Customers", "organizer.customers:read"),
)


def organizer_menu(ctx: OrgContext) -> list[MenuEntry]:
    """The organizer's pages this user may open (exports: any team, the list shows those
    the user may run)."""
    base = f"/control/organizer/{ctx.organizer_slug}/"
    entries = [
        MenuEntry("events", "Events", base),
        MenuEntry("exports", "Exports", base + "exports/"),
    ]
    for key, label, permission in ORGANIZER_MENU:
        if ctx.has_organizer_permission(permission):
            entries.append(MenuEntry(key, label, f"{base}{key}/"))
    return entries


async def organizer_nav(page: Page, ctx: OrgContext, active: str = "events") -> Nav:
    organizers = await user_organizers(page)
    current = next((o for o in organizers if o["slug"] == ctx.organizer_slug), None)
    nav = Nav(organizers=organizers, organizer=current, events=await organizer_events(ctx))
    nav.may_create = any(g.has_organizer_permission("organizer.events:create") for g in ctx.grants)
    nav.menu = organizer_menu(ctx)
    nav.active = active
    return nav


async def event_nav(page: Page, ctx: EventContext, active: str) -> Nav:
    nav = await organizer_nav(page, ctx)
    event = ctx.event
    nav.event = {
        "slug": event.slug,
        "name": text_of(event.name),
        "date_from": event.date_from,
        "date_to": event.date_to,
        "currency": event.currency,
        "timezone": event.timezone,
        "mode": mode_of(event.live, event.testmode),
        "url": event_url(ctx.organizer_slug, event.slug),
    }
    nav.menu = event_menu(ctx)
    nav.active = active
    return nav
