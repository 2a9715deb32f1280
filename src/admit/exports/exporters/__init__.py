"""Every exporter module; importing this package registers them all."""

from admit.exports.exporters import (  # noqa: F401
    checkin,
    checkinlog,
    giftcards,
    json_export,
    orders,
    quotas,
    vouchers,
)
