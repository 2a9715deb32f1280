"""Writes one ``audit_log`` row per configuration object a flush added, changed or deleted: the
event (its settings), categories, questions (and their options), tax rules, check-in lists,
discounts, dates (subevents); the organizer's devices, teams (and their tokens and invites) and
webhooks. With who did it (the request's principal, ``session.info[ACTOR]``) and, for a change,
the names of the fields that changed, never their values (secrets, token hashes).

Like the catalog stamp (``kit/stamps/catalog.py``) it hooks every flush, so no write path can
forget it; a flush that touches no audited model (order creation, redeeming, carts) costs a
type lookup per object and not one statement. Core statements bypass it; no configuration write
uses them alone but the devices' own calls, which ``record`` their changes. A child (a
question's option, a team's token) is recorded as a change of its owner, unless the owner is
added or deleted in the same flush (that row says it all).
Bookkeeping columns that the system itself moves (stamps, a webhook's delivery state) are not
changes anyone made, and a flush changing only them writes no row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import event, insert, inspect, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session, UOWTransaction
from sqlalchemy.orm.util import identity_key

from admit.db import utcnow
from admit.kit.http.context import ACTOR
from admit.models import (
    AuditEntry,
    CheckinList,
    Device,
    Discount,
    Event,
    ItemCategory,
    Organizer,
    Question,
    QuestionOption,
    SubEvent,
    SubEventItem,
    SubEventItemVariation,
    TaxRule,
    Team,
    TeamAPIToken,
    TeamInvite,
    Webhook,
)


@dataclass(frozen=True)
class Audited:
    kind: str  # ``audit_log.object_type``
    event_scoped: bool  # owned by an event (else by the organizer)
    ignored: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Child:
    owner: type[Any]
    attribute: str  # the owner's id
    label: str  # the owner's field this child is part of


_STAMPS = frozenset({"last_modified", "catalog_modified", "rows_deleted"})
AUDITED: dict[type[Any], Audited] = {
    Event: Audited("event", True, _STAMPS),
    ItemCategory: Audited("category", True),
    Question: Audited("question", True),
    TaxRule: Audited("taxrule", True),
    CheckinList: Audited("checkinlist", True),
    Discount: Audited("discount", True),
    SubEvent: Audited("subevent", True),
    Device: Audited("device", False),
    Team: Audited("team", False),
    Webhook: Audited("webhook", False, frozenset({
        "wake_at", "blocked_until", "failure_streak", "lock_owner", "lock_until"})),
}  # fmt: skip
CHILDREN: dict[type[Any], Child] = {
    QuestionOption: Child(Question, "question_id", "options"),
    SubEventItem: Child(SubEvent, "subevent_id", "products"),
    SubEventItemVariation: Child(SubEvent, "subevent_id", "variations"),
    TeamAPIToken: Child(Team, "team_id", "API tokens"),
    TeamInvite: Child(Team, "team_id", "invites"),
}
_AUDITED_TYPES = frozenset(AUDITED) | frozenset(CHILDREN)
_table = AuditEntry.__table__
_ADDED = "admit.audit_added"  # session.info: (transaction, keys of the objects it added)


def _changed(obj: Any, ignored: frozenset[str]) -> list[str]:
    """The names of the object's changed fields; a JSON settings dict by its changed keys."""
    names: list[str] = []
    for attr in inspect(obj).attrs:
        if attr.key in ignored:
            continue
        history = attr.history
        if not history.has_changes():
            continue
        old = history.deleted[0] if history.deleted else None
        new = history.added[0] if history.added else None
        if attr.key == "settings" and isinstance(old, dict) and isinstance(new, dict):
            keys = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
            names.extend(f"settings.{k}" for k in sorted(keys))
        else:
            names.append(attr.key)
    return names


def _pk(obj: Any) -> int | None:
    value = obj.__dict__.get("id")
    if value is None:
        key = inspect(obj).identity
        value = key[0] if key else None
    return value


def _entries(session: Session) -> dict[tuple[type[Any], int], dict[str, Any]]:
    """Rows by (model, id); children folded into their owners' rows."""
    rows: dict[tuple[type[Any], int], dict[str, Any]] = {}
    children: list[tuple[type[Any], int, str]] = []
    for group, action in ((session.new, "added"), (session.dirty, "changed"),
                          (session.deleted, "deleted")):  # fmt: skip
        for obj in group:
            kind = type(obj)
            if kind not in _AUDITED_TYPES:
                continue
            child = CHILDREN.get(kind)
            if child is not None:
                owner_id = obj.__dict__.get(child.attribute)
                if owner_id is not None and (action != "changed" or _changed(obj, frozenset())):
                    children.append((child.owner, owner_id, child.label))
                continue
            pk = _pk(obj)
            fields = _changed(obj, AUDITED[kind].ignored) if action == "changed" else []
            if pk is None or (action == "changed" and not fields):
                continue
            rows[(kind, pk)] = {"obj": obj, "action": action, "fields": fields}
    for owner, pk, label in children:
        row = rows.setdefault((owner, pk), {"obj": None, "action": "changed", "fields": []})
        if row["action"] == "changed" and label not in row["fields"]:
            row["fields"].append(label)
    return rows


def _scopes(session: Session, rows: dict[tuple[type[Any], int], dict[str, Any]]) -> None:
    """Sets each row's event and organizer: from the object, the identity map, or (for what
    neither holds) one query per model."""
    missing: dict[type[Any], set[int]] = {}
    for (kind, pk), row in rows.items():
        known = row["obj"] or session.identity_map.get(identity_key(kind, pk))
        values = known.__dict__ if known is not None else {}
        if kind is Event:
            row["event_id"], row["organizer_id"] = pk, values.get("organizer_id")
        elif AUDITED[kind].event_scoped:
            row["event_id"], row["organizer_id"] = values.get("event_id"), None
        else:
            row["event_id"], row["organizer_id"] = None, values.get("organizer_id")
        if row["event_id"] is None and row["organizer_id"] is None:
            missing.setdefault(kind, set()).add(pk)
    for kind, ids in missing.items():
        column = kind.event_id if AUDITED[kind].event_scoped else kind.organizer_id
        query = select(kind.id, column).where(kind.id.in_(ids))
        found = {a: b for a, b in session.connection().execute(query)}
        for pk in ids:
            key = "event_id" if AUDITED[kind].event_scoped else "organizer_id"
            rows[(kind, pk)][key] = found.get(pk)
    events: set[int] = set()
    for row in rows.values():
        if row["organizer_id"] is None and row["event_id"] is not None:
            known = session.identity_map.get(identity_key(Event, row["event_id"]))
            if known is not None and known.__dict__.get("organizer_id") is not None:
                row["organizer_id"] = known.__dict__["organizer_id"]
            else:
                events.add(row["event_id"])
    if events:
        query = select(Event.id, Event.organizer_id).where(Event.id.in_(events))
        organizers = {a: b for a, b in session.connection().execute(query)}
        for row in rows.values():
            if row["organizer_id"] is None and row["event_id"] in organizers:
                row["organizer_id"] = organizers[row["event_id"]]


def _gone(session: Session) -> tuple[set[int], set[int]]:
    """Events and organizers this flush deletes: no row is written about what they own."""
    events = {_pk(o) for o in session.deleted if type(o) is Event}
    organizers = {_pk(o) for o in session.deleted if type(o) is Organizer}
    return {e for e in events if e is not None}, {o for o in organizers if o is not None}


@event.listens_for(Session, "after_flush")
def _after_flush(session: Session, _flush: UOWTransaction) -> None:
    rows = _entries(session)
    if not rows:
        return
    # An object added earlier in this transaction (its children flushed after it, a second
    # flush of the same request): its "added" row says it all.
    transaction = session.get_transaction()
    added = session.info.get(_ADDED)
    if added is None or added[0] is not transaction:
        added = (transaction, set())
        session.info[_ADDED] = added
    for key in [k for k, row in rows.items() if row["action"] == "changed" and k in added[1]]:
        del rows[key]
    added[1].update(k for k, row in rows.items() if row["action"] == "added")
    if not rows:
        return
    _scopes(session, rows)
    gone_events, gone_organizers = _gone(session)
    actor = session.info.get(ACTOR)
    now = utcnow()
    values = []
    for (kind, pk), row in rows.items():
        if row["organizer_id"] is None or row["organizer_id"] in gone_organizers:
            continue  # the owner is gone too (deleted along with it)
        event_id = row["event_id"]
        if event_id in gone_events:
            if kind is not Event:
                continue
            event_id = None  # the event's own deletion stays, as the organizer's
        values.append({
            "organizer_id": row["organizer_id"], "event_id": event_id,
            "object_type": AUDITED[kind].kind, "object_id": pk, "action": row["action"],
            "fields": row["fields"], "created": now,
            "actor_kind": actor[0] if actor else None, "actor_id": actor[1] if actor else None,
        })  # fmt: skip
    if values:
        session.connection().execute(insert(_table), values)


async def record(
    session: AsyncSession,
    object_type: str,
    pk: int,
    organizer_id: int,
    fields: list[str],
    *,
    actor: tuple[str, int] | None = None,
) -> None:
    """A change a Core statement made (no flush sees it): a device pairing itself, reporting
    its hardware, rolling its token or revoking itself. ``actor``: when the request's principal
    is not who made it (a device pairing with its one-time token has none yet)."""
    who = actor or session.info.get(ACTOR)
    await session.execute(insert(_table).values(
        organizer_id=organizer_id, event_id=None, object_type=object_type, object_id=pk,
        action="changed", fields=fields, created=utcnow(),
        actor_kind=who[0] if who else None, actor_id=who[1] if who else None,
    ))  # fmt: skip
