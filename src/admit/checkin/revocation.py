"""Revoked ticket secrets: whenever a position's ``secret`` changes (``regenerate_secrets``, a
PATCH of the position, anything else that writes it through the ORM), the old secret is
recorded, so a scan of it answers ``revoked`` rather than ``invalid`` and a forced upload of
an old offline scan still finds the ticket. A flush hook, so no writer has to remember it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, inspect
from sqlalchemy.orm import Session

from admit.db import utcnow
from admit.models import OrderPosition, RevokedSecret


def _record_replaced_secrets(session: Session, _context: Any, _instances: Any) -> None:
    for obj in list(session.dirty):
        if not isinstance(obj, OrderPosition):
            continue
        history = inspect(obj).attrs.secret.history
        if not history.deleted or not history.added:
            continue
        for old in history.deleted:
            if old and old not in history.added:
                session.add(
                    RevokedSecret(
                        event_id=obj.event_id, position_id=obj.id, secret=old, created=utcnow()
                    )
                )


def register() -> None:
    """Every ORM session records replaced secrets from now on (idempotent)."""
    if not event.contains(Session, "before_flush", _record_replaced_secrets):
        event.listen(Session, "before_flush", _record_replaced_secrets)
