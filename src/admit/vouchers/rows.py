"""How vouchers render for GETs (see ``kit/resources/render.py``): the same JSON as
``render.render`` through ``VoucherOut``, the seat as its guid."""

from __future__ import annotations

from sqlalchemy import select

from admit.kit.resources.render import Rows
from admit.models import Seat, Voucher
from admit.vouchers.schemas import VoucherOut

_SEAT_GUID = (
    select(Seat.seat_guid)
    .where(Seat.id == Voucher.seat_id)
    .correlate_except(Seat)
    .scalar_subquery()
)

VOUCHER_ROWS = Rows(VoucherOut, Voucher, columns={"seat": _SEAT_GUID})
