"""The history of changes of an order (and of a product, quota, voucher, gift card or
customer), from the notifications outbox (every API and back-office change of them records
its type there, in the change's transaction) with who did it: the user, API token, device or
OAuth application's user the request acted for (``notifications.actor_kind`` / ``actor_id``).
Rows are kept as long as the outbox keeps them (``notifications.retention``); orders placed
through the PostgreSQL order lane have their "placed" rows without a name (its SQL function
writes them). The configuration objects (the event, its categories, questions, tax rules,
check-in lists, discounts; the organizer's devices, teams, webhooks) have theirs in the audit
log (``audit/log.py``) instead, with the names of the fields that changed."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from admit.kit.http.context import EventContext, OrgContext
from admit.models import AuditEntry, Device, Notification, TeamAPIToken, User

LIMIT = 200
PREFIX = "service.event.order."
WORDS = {
    "placed": "Order placed",
    "placed.require_approval": "Order placed, waiting for approval",
    "paid": "Marked as paid",
    "payment.confirmed": "Payment confirmed",
    "approved": "Approved",
    "denied": "Denied",
    "canceled": "Canceled",
    "reactivated": "Reactivated",
    "expired": "Expired",
    "expirychanged": "Payment deadline changed",
    "modified": "Order details changed",
    "contact.changed": "Contact details changed",
    "changed.secret": "New ticket codes",
    "changed.cancel": "A ticket was canceled",
    "changed.item": "A ticket's product changed",
    "changed.price": "A ticket's price changed",
    "changed.add": "A ticket was added",
    "changed.validity": "Ticket validity changed",
    "changed.blocked": "Ticket blocks changed",
    "refund.created": "Refund created",
    "refund.created.externally": "Refund recorded",
    "refund.done": "Refund done",
    "refund.canceled": "Refund canceled",
    "refund.failed": "Refund failed",
    "deleted": "Deleted",
}
_MADE = {"added": "Created", "changed": "Changed", "deleted": "Deleted"}
OBJECT_WORDS = {
    "service.event.item.": _MADE,
    "service.event.quota.": _MADE,
    "service.voucher.": _MADE,
    "service.giftcards.transaction.": {"manual": "Value booked by hand"},
    "service.giftcards.": {"created": "Created", "modified": "Changed"},
    "service.customer.": {"created": "Created", "changed": "Changed",
                          "anonymized": "Personal data deleted"},
}  # fmt: skip
KINDS = {"user": "user", "oauth": "user (OAuth application)", "token": "API token",
         "device": "device"}  # fmt: skip


def describe(action: str) -> str:
    for prefix, words in OBJECT_WORDS.items():
        if action.startswith(prefix):
            return words.get(action.removeprefix(prefix), action.removeprefix(prefix))
    short = action.removeprefix(PREFIX)
    if short in WORDS:
        return WORDS[short]
    if short.startswith("changed."):
        return "Changed: " + short.removeprefix("changed.").replace("_", " ")
    return short.replace(".", " ").replace("_", " ").capitalize()


async def _names(ctx: OrgContext, actors: set[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """Display names of the actors, each kind in one statement (those of other organizers
    are never shown: tokens and devices are looked up within this organizer)."""
    ids: dict[str, set[int]] = {}
    for kind, pk in actors:
        ids.setdefault("user" if kind == "oauth" else kind, set()).add(pk)
    names: dict[tuple[str, int], str] = {}
    if ids.get("user"):
        for pk, email, fullname in await ctx.session.execute(
            select(User.id, User.email, User.fullname).where(User.id.in_(ids["user"]))
        ):
            names[("user", pk)] = fullname or email
    if ids.get("token"):
        for pk, name in await ctx.session.execute(
            select(TeamAPIToken.id, TeamAPIToken.name).where(TeamAPIToken.id.in_(ids["token"]))
        ):
            names[("token", pk)] = name
    if ids.get("device"):
        for pk, name in await ctx.session.execute(
            select(Device.id, Device.name).where(
                Device.id.in_(ids["device"]), Device.organizer_id == ctx.organizer_id
            )
        ):
            names[("device", pk)] = name
    return names


async def order_history(ctx: EventContext, code: str) -> list[dict[str, Any]]:
    """The order's recorded changes, oldest first."""
    return await history(ctx, Notification.payload["code"].as_string() == code)


async def object_history(ctx: EventContext, key: str, pk: int) -> list[dict[str, Any]]:
    """The recorded changes of the event's object whose notifications carry ``key`` (a
    product's ``item``, a voucher's ``voucher``), oldest first."""
    return await history(ctx, Notification.payload[key].as_integer() == pk)


async def organizer_history(ctx: OrgContext, key: str, value: int | str) -> list[dict[str, Any]]:
    """The recorded changes of the organizer's object whose notifications carry ``key`` (a
    gift card's ``giftcard`` id, a customer's ``customer`` identifier), oldest first."""
    field = Notification.payload[key]
    about = (field.as_integer() if isinstance(value, int) else field.as_string()) == value
    return await history(ctx, about, event=False)


def _who(kind: str | None, pk: int | None, names: dict[tuple[str, int], str]) -> str:
    if not kind:
        return "—"
    name = names.get(("user" if kind == "oauth" else kind, pk or 0))
    return f"{KINDS.get(kind, kind)} {name}" if name else f"{KINDS.get(kind, kind)} #{pk}"


def _audited(action: str, fields: list[str]) -> str:
    if action != "changed" or not fields:
        return _MADE.get(action, action)
    return "Changed: " + ", ".join(f.replace("_", " ") for f in fields)


async def audit_history(ctx: OrgContext, object_type: str, pk: int) -> list[dict[str, Any]]:
    """The audit log's rows of one configuration object of the context's organizer (an
    event's object: of the context's event), oldest first."""
    about = (AuditEntry.object_type == object_type) & (AuditEntry.object_id == pk)
    about &= AuditEntry.organizer_id == ctx.organizer_id
    if isinstance(ctx, EventContext):
        about &= AuditEntry.event_id == ctx.event.id
    rows = (
        await ctx.session.execute(
            select(AuditEntry.created, AuditEntry.action, AuditEntry.fields,
                   AuditEntry.actor_kind, AuditEntry.actor_id)
            .where(about)
            .order_by(AuditEntry.created, AuditEntry.id)
            .limit(LIMIT)
        )
    ).all()  # fmt: skip
    names = await _names(ctx, {(k, i) for *_, k, i in rows if k and i is not None})
    return [{"when": created, "what": _audited(action, fields or []), "who": _who(k, i, names),
             "action": action} for created, action, fields, k, i in rows]  # fmt: skip


async def history(ctx: OrgContext, about: Any, *, event: bool = True) -> list[dict[str, Any]]:
    """``event``: the rows of the context's event; else the organizer's rows of no event."""
    scope = (
        Notification.event_id == ctx.event.id  # type: ignore[attr-defined]
        if event
        else (Notification.organizer_id == ctx.organizer_id) & Notification.event_id.is_(None)
    )
    rows = (
        await ctx.session.execute(
            select(Notification.created, Notification.action, Notification.actor_kind,
                   Notification.actor_id)
            .where(scope, about)
            .order_by(Notification.created, Notification.id)
            .limit(LIMIT)
        )
    ).all()  # fmt: skip
    actors = {(k, i) for _, _, k, i in rows if k and i is not None}
    names = await _names(ctx, actors)
    out = []
    for created, action, kind, pk in rows:
        out.append({"when": created, "what": describe(action), "who": _who(kind, pk, names),
                    "action": action})  # fmt: skip
    return out
