"""Check-in data: which device scanned a ticket at which gate, and the raw scanned text.

Where and with what a person entered is personal data; *that* and *when* a ticket was used is
not much more than the sale itself, and it is what attendance figures, the check-in lists'
state and the tickets' "used" flag rest on. So the scans stay (list, ticket, type, time,
success, reason), and ``device``, ``device_number``, ``gate`` and ``raw_barcode`` go — the raw
text of a failed scan can be anything a scanner read, such as someone's ID card.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import or_, select, update

from admit.models import Checkin, Device, Gate, Order, OrderPosition
from admit.shredders.base import JsonList, Part, Shredder, ShredRun, position_key, register, stream

_HOLDS_DATA = or_(
    Checkin.device_id.is_not(None),
    Checkin.device_number.is_not(None),
    Checkin.gate_id.is_not(None),
    Checkin.raw_barcode.is_not(None),
)


@register
class CheckinDataShredder(Shredder):
    identifier = "checkin_data"
    verbose_name = "Check-in devices and gates"

    async def parts(self, run: ShredRun) -> AsyncIterator[Part]:
        yield JsonList("checkins.json", self._checkins(run))

    async def _checkins(self, run: ShredRun) -> AsyncIterator[dict[str, Any]]:
        query = (
            select(
                Checkin.id,
                Checkin.list_id,
                Order.code,
                OrderPosition.positionid,
                Checkin.type,
                Checkin.datetime,
                Checkin.successful,
                Checkin.device_id,
                Device.name,
                Checkin.device_number,
                Checkin.gate_id,
                Gate.name,
                Checkin.raw_barcode,
            )
            .select_from(Checkin)
            .outerjoin(OrderPosition, OrderPosition.id == Checkin.position_id)
            .outerjoin(Order, Order.id == OrderPosition.order_id)
            .outerjoin(Device, Device.id == Checkin.device_id)
            .outerjoin(Gate, Gate.id == Checkin.gate_id)
            .where(Checkin.event_id == run.event_id, _HOLDS_DATA)
            .order_by(Checkin.id)
        )
        async for row in stream(run.session, query):
            (id_, list_id, code, positionid, type_, when, ok) = row[:7]
            device, device_name, device_number, gate, gate_name, raw = row[7:]
            yield {
                "id": id_,
                "list": list_id,
                "position": position_key(code, positionid) if code else None,
                "type": type_,
                "datetime": when,
                "successful": ok,
                "device": device,
                "device_name": device_name,
                "device_number": device_number,
                "gate": gate,
                "gate_name": gate_name,
                "raw_barcode": raw,
            }

    async def shred(self, run: ShredRun) -> None:
        await run.session.execute(
            update(Checkin)
            .where(Checkin.event_id == run.event_id, _HOLDS_DATA)
            .values(device_id=None, device_number=None, gate_id=None, raw_barcode=None)
            .execution_options(synchronize_session=False)
        )
