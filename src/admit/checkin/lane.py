"""``checkinrpc/redeem/`` in the fast lane (``kit/lanes/fastlane.py``): at the doors nearly every
request is a scan, and the framework's routing and dependency solving cost more than the scan.

The lane runs the same :class:`~admit.checkin.redeem.Redeem` as the route, on the same
access rule, for every scan except those that carry answers to check-in questions (those
write through the request's transaction) or query parameters (``expand``); those, and every
request the lane cannot parse, go through the route. A keyed first entry writes its key in
its own statement (``keyed.py``); other keyed scans commit in groups (``lane_write``).
"""

from __future__ import annotations

from pydantic import ValidationError
from starlette.responses import Response

from admit.checkin import keyed
from admit.checkin.access import ScanAccess
from admit.checkin.redeem import Redeem
from admit.checkin.schemas import RedeemIn
from admit.kit.http.context import lane_context
from admit.kit.idempotency.lane import lane_write
from admit.kit.lanes.fastlane import LaneRequest

_ACCESS = ScanAccess()


async def redeem(request: LaneRequest) -> Response | None:
    raw = request.json_object()
    if raw is None or raw.get("answers"):
        return None
    try:
        data = RedeemIn.model_validate(raw)
    except ValidationError:
        return None
    async with lane_context(request.scope, _ACCESS, request.params) as ctx:
        if ctx is None:
            return None
        scan = Redeem(ctx, data)
        answered = await keyed.first_entry(scan, request.scope, raw)
        if answered is not None:
            return answered
        return await lane_write(request.scope, ctx.session, scan.run)
