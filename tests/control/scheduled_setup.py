"""What the generated permission test makes before visiting some pages: a product's add-on
or bundle (through the API), and a scheduled export (its pages are visible to its owner and
changed by a holder of the exporter's permission, so the user holding that permission
schedules one first, through the page)."""

from __future__ import annotations

from typing import Any

from tests.control.conftest import E, Shop, _post
from tests.oauth.helpers import csrf

SCHEDULED = "/exports/scheduled/"
RULE = "DTSTART:20300101T000000\nRRULE:FREQ=WEEKLY"
# The exporter scheduled at each level and the permission it needs.
EXPORTER = {"event": ("orderlist", "xlsx", "event.orders:read"),
            "organizer": ("giftcardlist", "csv", "organizer.giftcards:read")}  # fmt: skip


def form(level: str) -> dict[str, str]:
    identifier, fmt, _ = EXPORTER[level]
    values = {"export_identifier": identifier, "x-_format": fmt, "mail_subject": "Weekly",
              "mail_template": "Attached.", "schedule_rrule": RULE,
              "schedule_rrule_time": "08:00", "locale": "en"}  # fmt: skip
    if level == "organizer":
        values["timezone"] = "UTC"
    return values


def base(level: str) -> str:
    if level == "event":
        return "/control/event/acme/summit/exports/"
    return "/control/organizer/acme/exports/"


async def setup(web: Any, level: str, path: str, sign_in: Any, email: str) -> dict[str, str]:
    """Has ``email`` (holding the exporter's permission) schedule an export when the page is
    one export's; its id is the URL's."""
    if "{id}" not in path:
        return {}
    await sign_in(email)
    token = csrf((await web.get("/logout")).text)
    made = await web.post(base(level) + "scheduled/new", data={"csrf_token": token, **form(level)})
    assert made.status_code == 303, made.text[made.text.find("<main") :][:1500]
    return {"id": made.headers["location"].rstrip("/").rsplit("/", 1)[1]}


def having(level: str) -> dict[str, list[str]]:
    permission = EXPORTER[level][2]
    key = "event_permissions" if level == "event" else "organizer_permissions"
    return {"event_permissions": [], "organizer_permissions": [], key: [permission]}


async def product_child(api, shop: Shop, path: str, item: int) -> dict[str, str]:
    """An add-on (and a second add-on category free for another) or a bundle of ``item``."""
    if "/bundles/" in path:
        made = await _post(api, shop.token, f"{E}/items/{item}/bundles/",
                           {"bundled_item": shop.item})  # fmt: skip
        return {"cid": str(made["id"]), "bundled": str(shop.item)}
    used, free = [
        await _post(api, shop.token, f"{E}/categories/", {"name": {"en": n}, "is_addon": True})
        for n in ("Drinks", "Snacks")
    ]
    made = await _post(api, shop.token, f"{E}/items/{item}/addons/",
                       {"addon_category": used["id"]})  # fmt: skip
    return {"cid": str(made["id"]), "category": str(free["id"])}
