"""What moves ``events.rows_deleted``: the deletion of any of the event's orders, check-ins or
vouchers, through whatever path (triggers, ``models/stamp_triggers.py``).

Row stamps show what was written since a moment, but not what was deleted: a deleted row
leaves nothing to find. The kept list pages (``kit/stamps/pagecache.py``) probe this stamp beside
the row stamps, so a page that showed a deleted row is not answered again. Only deletions
move it (inserts and updates are on the rows' own stamps): it is written rarely, and never on
the paths that sell or scan."""

from __future__ import annotations

from admit.db import Base
from admit.models.checkin import Checkin
from admit.models.events import Event
from admit.models.orders import Order
from admit.models.stamp_triggers import Child, ParentStamp
from admit.models.vouchers import Voucher

_DELETE = ("DELETE",)

DELETION_STAMP = ParentStamp(
    name="deletion_stamp",
    stamp=Event.rows_deleted,
    children=(
        Child(Order.event_id, ops=_DELETE),
        Child(Checkin.event_id, ops=_DELETE),
        Child(Voucher.event_id, ops=_DELETE),
    ),
    own=False,
)
DELETION_STAMP.attach(Base.metadata)
