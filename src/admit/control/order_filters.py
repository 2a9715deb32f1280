"""The orders list's filter form: what a box-office user types or picks (a product or one of
its variations, a payment method, placed from / until as days of the event's calendar) read
into the API's own order filters (``item``, ``variation``, ``payment_provider``,
``created_since``, ``created_before`` of ``orders.filters``), so the list means exactly what
``GET E/orders/`` means. Each bad value gets a message for its field; nothing is guessed.

Days are the event's: "placed from 3 May" starts at midnight in the event's time zone, "until
3 May" includes that whole day. Every filter reads an indexed column (the orders' event and
date, the positions' product and variation, the payments' order)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from sqlalchemy import select

from admit.control.fields import _zone, whole_number
from admit.control.render import STATUS_LABELS, text_of
from admit.kit.http.context import EventContext
from admit.kit.resources.filtering import PK_MAX
from admit.models import Item, ItemVariation
from admit.payments.providers import PROVIDERS

MAX_SEARCH = 200
FIELDS = ("search", "status", "product", "provider", "placed_from", "placed_until", "page")
# Methods written by the API itself besides the registered providers (a manual payment).
EXTRA_PROVIDERS = {"manual": "Manual payment"}
PROVIDER_NAME = re.compile(r"^[a-z0-9_.\-]{1,64}$")


def page_number(raw: str | None) -> int | None:
    if raw in (None, ""):
        return 1
    return whole_number(raw, 100_000) or None


def provider_choices(asked: str = "") -> list[tuple[str, str]]:
    """The payment methods to pick from: the registered ones, a manual payment, and the one
    asked for if it is another (payments the API recorded with a method of its caller's)."""
    choices = [(p.identifier, p.label or p.identifier) for p in PROVIDERS.values()]
    choices += list(EXTRA_PROVIDERS.items())
    if asked and PROVIDER_NAME.match(asked) and asked not in dict(choices):
        choices.append((asked, asked))
    return choices


async def product_choices(
    ctx: EventContext, *, bare_with_variations: bool = True
) -> list[tuple[str, str]]:
    """Products of the event, each followed by its variations (``item`` or ``item-variation``);
    without ``bare_with_variations`` a product that has variations is only offered as them
    (what a ticket can become)."""
    items = (
        await ctx.session.execute(
            select(Item.id, Item.name)
            .where(Item.event_id == ctx.event.id)
            .order_by(Item.position, Item.id)
        )
    ).all()
    variations: dict[int, list[tuple[int, Any]]] = {}
    for vid, item_id, value in await ctx.session.execute(
        select(ItemVariation.id, ItemVariation.item_id, ItemVariation.value)
        .join(Item, Item.id == ItemVariation.item_id)
        .where(Item.event_id == ctx.event.id)
        .order_by(ItemVariation.position, ItemVariation.id)
    ):
        variations.setdefault(item_id, []).append((vid, value))
    out: list[tuple[str, str]] = []
    for item_id, name in items:
        if bare_with_variations or not variations.get(item_id):
            out.append((str(item_id), text_of(name)))
        out += [(f"{item_id}-{vid}", f"{text_of(name)} – {text_of(value)}")
                for vid, value in variations.get(item_id, [])]  # fmt: skip
    return out


def _day(raw: str) -> dt.date | None:
    """A day as a date field sends it (``YYYY-MM-DD``); None for anything else."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw):
        return None
    try:
        day = dt.date.fromisoformat(raw)
    except ValueError:
        return None
    return day if dt.date(1900, 1, 1) <= day <= dt.date(9998, 12, 31) else None


def _midnight(day: dt.date, zone: dt.tzinfo) -> str:
    """The start of ``day`` in the event's time zone, as the API's filters read a moment."""
    return dt.datetime.combine(day, dt.time(), zone).astimezone(dt.UTC).isoformat()


def read(params: Any, timezone: str) -> tuple[dict[str, str], dict[str, str], dict[str, list[str]]]:
    """What the form asked (as typed, to show again), the API filters it means, and what is
    wrong with it by field."""
    asked = {name: str(params.get(name, "")).strip() for name in FIELDS}
    errors: dict[str, list[str]] = {}
    api: dict[str, str] = {}
    if len(asked["search"]) > MAX_SEARCH:
        errors["search"] = [f"Search for at most {MAX_SEARCH} characters."]
    elif asked["search"]:
        api["search"] = asked["search"]
    if asked["status"] not in ("", *STATUS_LABELS):
        errors["status"] = ["Choose one of the listed states."]
    elif asked["status"]:
        api["status"] = asked["status"]
    if asked["product"]:
        ids = [whole_number(part, PK_MAX) for part in asked["product"].split("-")]
        if len(ids) > 2 or not all(ids):
            errors["product"] = ["Choose one of the listed products."]
        else:
            api["item"] = str(ids[0])
            if len(ids) > 1:
                api["variation"] = str(ids[1])
    if asked["provider"]:
        if not PROVIDER_NAME.match(asked["provider"]):
            errors["provider"] = ["Choose one of the listed payment methods."]
        else:
            api["payment_provider"] = asked["provider"]
    zone = _zone(timezone)
    days: dict[str, dt.date] = {}
    for name in ("placed_from", "placed_until"):
        if asked[name]:
            day = _day(asked[name])
            if day is None:
                errors[name] = ["Enter a day as YYYY-MM-DD."]
            else:
                days[name] = day
    if "placed_from" in days:
        api["created_since"] = _midnight(days["placed_from"], zone)
    if "placed_until" in days:
        api["created_before"] = _midnight(days["placed_until"] + dt.timedelta(days=1), zone)
    if len(days) == 2 and days["placed_from"] > days["placed_until"]:
        errors["placed_until"] = ["The last day cannot be before the first day."]
    if page_number(asked["page"]) is None:
        errors["page"] = ["There is no such page."]
    return asked, api, errors


def kept(asked: dict[str, str]) -> dict[str, str]:
    """The filters a pager link keeps (every one that is set, the page number aside)."""
    return {k: v for k, v in asked.items() if v and k != "page"}
