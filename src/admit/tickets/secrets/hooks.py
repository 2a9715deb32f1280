"""What every write of positions and orders does to secrets, as flush hooks (no writer has to
remember them, whatever path changes a ticket: order change, position PATCH, actions).

- A position of a signed event whose product, variation, date or validity window changed gets
  a new signed secret (unless the same flush sets one itself); so does every live position of
  a signed event's order that is reactivated. The old secret goes to the revocation list
  through ``checkin/revocation.py``'s hook, which runs after this one.
- A canceled position, and every position of a canceled order, has its secret revoked.
- A change of a position's ``blocked`` writes the block list (``blocked_ticket_secrets``)
  right after the position is written: one row per secret, upserted, so concurrent blocks and
  unblocks of a ticket end in one row and a lifted block stays as ``blocked: false`` for
  devices to sync.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, inspect, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from admit.db import utcnow
from admit.models import BlockedSecret, Event, Order, OrderPosition, RevokedSecret
from admit.tickets.secrets import generator

_BLOCKS = "admit.block_list"  # session.info: block list rows to write after the flush
_CERTIFIED = ("item_id", "variation_id", "subevent_id", "valid_from", "valid_until")


def _changed(obj: Any, name: str) -> bool:
    return bool(inspect(obj).attrs[name].history.has_changes())


def _issuer(session: Session, event_id: int, cache: dict[int, Any]) -> Any:
    if event_id not in cache:
        found = session.get(Event, event_id)
        cache[event_id] = generator.issuer_sync(session, found) if found is not None else None
    return cache[event_id]


def _revoke(session: Session, event_id: int, position_id: int, secret: str) -> None:
    session.add(
        RevokedSecret(event_id=event_id, position_id=position_id, secret=secret, created=utcnow())
    )


def _positions(session: Session, order_id: int) -> list[OrderPosition]:
    query = select(OrderPosition).where(
        OrderPosition.order_id == order_id, OrderPosition.canceled.is_(False)
    )
    return list(session.scalars(query))


def write_block(
    session: Session, event_id: int, position_id: int | None, secret: str, blocked: bool
) -> None:
    """Upserts the block list row of ``secret``."""
    values = {
        "event_id": event_id,
        "position_id": position_id,
        "secret": secret,
        "blocked": blocked,
        "updated": utcnow(),
    }
    dialect = session.get_bind().dialect.name
    insert: Any = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(BlockedSecret).values(**values)
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["event_id", "secret"],
            set_={
                "blocked": statement.excluded.blocked,
                "updated": statement.excluded.updated,
                "position_id": statement.excluded.position_id,
            },
        )
    )


def _before_flush(session: Session, _context: Any, _instances: Any) -> None:
    issuers: dict[int, Any] = {}
    blocks: list[tuple[int, int, str, bool]] = []
    for obj in list(session.dirty):
        if isinstance(obj, Order) and _changed(obj, "status"):
            old = inspect(obj).attrs.status.history.deleted
            if obj.status == "c":
                for position in _positions(session, obj.id):
                    _revoke(session, obj.event_id, position.id, position.secret)
            elif old and old[0] == "c":
                signed = _issuer(session, obj.event_id, issuers)
                for position in _positions(session, obj.id) if signed else ():
                    position.secret = generator.for_position(signed, position)
                    if position.blocked:
                        blocks.append((position.event_id, position.id, position.secret, True))
            continue
        if not isinstance(obj, OrderPosition) or obj.id is None:
            continue
        if _changed(obj, "canceled") and obj.canceled:
            _revoke(session, obj.event_id, obj.id, obj.secret)
            continue
        if not _changed(obj, "secret") and any(_changed(obj, n) for n in _CERTIFIED):
            signed = _issuer(session, obj.event_id, issuers)
            if signed is not None:
                obj.secret = generator.for_position(signed, obj)
        if _changed(obj, "blocked") or (_changed(obj, "secret") and obj.blocked):
            blocks.append((obj.event_id, obj.id, obj.secret, bool(obj.blocked)))
    if blocks:
        session.info.setdefault(_BLOCKS, []).extend(blocks)


def _after_flush(session: Session, _context: Any) -> None:
    """Writes the block list once the positions are: a ticket's row lock (and through its
    trigger the order's) comes before the block list row's, in every path, so two writers
    of one ticket never wait for each other crosswise."""
    for event_id, position_id, secret, blocked in session.info.pop(_BLOCKS, ()):
        write_block(session, event_id, position_id, secret, blocked)


def register() -> None:
    """Every ORM session applies these rules from now on (idempotent). Runs before the
    revocation hook, which records the secrets replaced here."""
    if not event.contains(Session, "before_flush", _before_flush):
        event.listen(Session, "before_flush", _before_flush, insert=True)
        event.listen(Session, "after_flush", _after_flush)
