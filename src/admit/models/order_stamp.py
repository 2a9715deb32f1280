"""What moves an order's ``last_modified``: the order row itself and every row rendered as part
of it (positions, fees, payments, refunds, answers and their chosen options, successful
check-ins, print logs), changed through whatever path. Triggers (``models/stamp_triggers.py``)
installed by migration 0018 (and by ``metadata.create_all``) keep it, so ``modified_since``
on the order lists is exact; ``kit/stamps/page.py`` gives the matching ``X-Page-Generated``.

Failed scans are not part of an order (its check-ins are the successful ones): the redeem
lane's refusals leave ``last_modified`` alone. Cart answers have no order position and are
skipped by the path (its key is NULL)."""

from __future__ import annotations

from admit.db import Base
from admit.models.checkin import Checkin
from admit.models.orders import (
    Answer,
    Order,
    OrderFee,
    OrderPayment,
    OrderPosition,
    OrderRefund,
    PrintLog,
    answer_options,
)
from admit.models.stamp_triggers import Child, ParentStamp

ORDER_STAMP = ParentStamp(
    name="order_stamp",
    stamp=Order.last_modified,
    children=(
        Child(OrderPosition.order_id),
        Child(OrderFee.order_id),
        Child(OrderPayment.order_id),
        Child(OrderRefund.order_id),
        Child(Answer.orderposition_id, via=(OrderPosition.order_id,)),
        Child(answer_options.c.answer_id, via=(Answer.orderposition_id, OrderPosition.order_id)),
        Child(Checkin.position_id, via=(OrderPosition.order_id,), when=Checkin.successful),
        Child(PrintLog.position_id, via=(OrderPosition.order_id,)),
    ),
)
ORDER_STAMP.attach(Base.metadata)
