"""Change stamps of single rows, moved by triggers (``models/stamp_triggers.py`` with no children):
``vouchers.last_modified`` and ``checkins.last_modified``, on every insert and update through
whatever path (a redemption's count, the redeem lane's batched inserts, an annulment, a
shredder). The kept voucher and check-in pages (``kit/stamps/pagecache.py``) probe the newest of
them against a page's bound; deletions are on ``models/deletion_stamp.py``.

On PostgreSQL the stamp is the transaction's start or later (a value the application set is
kept only when it is not earlier), so a change committed after a page was read is never
stamped before the page's bound. On SQLite, which keeps no pages, inserts take the ORM's
default and updates the statement's time."""

from __future__ import annotations

from admit.db import Base
from admit.models.checkin import Checkin
from admit.models.stamp_triggers import ParentStamp
from admit.models.vouchers import Voucher

VOUCHER_STAMP = ParentStamp(name="voucher_stamp", stamp=Voucher.last_modified)
CHECKIN_STAMP = ParentStamp(name="checkin_stamp", stamp=Checkin.last_modified)
ROW_STAMPS = (VOUCHER_STAMP, CHECKIN_STAMP)
for _stamp in ROW_STAMPS:
    _stamp.attach(Base.metadata)
