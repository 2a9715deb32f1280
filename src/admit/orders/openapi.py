"""What the OpenAPI document cannot see in the order routes: the answers they render
themselves (orders, positions, payments, refunds, print logs) and the flags and field
selections read outside any FilterSet. Registered with ``kit.openapi`` at the import of
``orders/routes.py``, so the document imports no domain."""

from __future__ import annotations

import re
from typing import Any

from admit.kit.openapi import query, responses
from admit.kit.openapi.query import E, O, flag, param
from admit.kit.resources.crud import Page
from admit.orders.filters import FLAGS
from admit.orders.order_out import OrderOut, OrderPositionOut, PaymentOut, PrintLogOut, RefundOut

ORDER = f"{E}/orders/{{code}}"
PAYMENT = f"{ORDER}/payments/{{local_id}}"
REFUND = f"{ORDER}/refunds/{{local_id}}"

responses.document(
    {
        ("GET", f"{E}/orders/"): Page[OrderOut],
        ("POST", f"{E}/orders/"): OrderOut,
        ("GET", f"{O}/orders/"): Page[OrderOut],
        ("GET", f"{ORDER}/"): OrderOut,
        ("PATCH", f"{ORDER}/"): OrderOut,
        **{
            ("POST", f"{ORDER}/{action}/"): OrderOut
            for action in (
                "mark_paid",
                "mark_pending",
                "mark_expired",
                "mark_canceled",
                "reactivate",
                "extend",
                "approve",
                "deny",
                "regenerate_secrets",
                "change",
            )
        },
        ("GET", f"{E}/orderpositions/"): Page[OrderPositionOut],
        ("GET", f"{E}/orderpositions/{{id}}/"): OrderPositionOut,
        ("PATCH", f"{E}/orderpositions/{{id}}/"): OrderPositionOut,
        ("POST", f"{E}/orderpositions/{{id}}/printlog/"): PrintLogOut,
        ("GET", f"{ORDER}/payments/"): Page[PaymentOut],
        ("POST", f"{ORDER}/payments/"): PaymentOut,
        ("GET", f"{PAYMENT}/"): PaymentOut,
        ("POST", f"{PAYMENT}/confirm/"): PaymentOut,
        ("POST", f"{PAYMENT}/cancel/"): PaymentOut,
        ("POST", f"{PAYMENT}/refund/"): RefundOut,
        ("GET", f"{ORDER}/refunds/"): Page[RefundOut],
        ("POST", f"{ORDER}/refunds/"): RefundOut,
        ("GET", f"{REFUND}/"): RefundOut,
        ("POST", f"{REFUND}/done/"): RefundOut,
        ("POST", f"{REFUND}/process/"): RefundOut,
        ("POST", f"{REFUND}/cancel/"): RefundOut,
    }
)


@query.shaper
def _shaping() -> list[tuple[str, re.Pattern[str], list[dict[str, Any]]]]:
    org = re.escape(O)
    event = re.escape(E)
    order_flags = [flag(name, "Show canceled positions / fees, or ticket data.") for name in FLAGS]
    return [
        ("*", re.compile(rf"^{event}/(orders/({{code}}/)?|orders/{{code}}/"
                         r"(change|extend|mark_[a-z]+|reactivate|approve|deny|"
                         r"regenerate_secrets)/|"
                         rf"orderpositions/({{id}}/(printlog/)?)?)$"), order_flags),
        ("GET", re.compile(rf"^({event}/(orders|orderpositions)/({{(code|id)}}/)?|{org}/orders/)$"),
         [param(name, {"type": "array", "items": {"type": "string"}}, text, style="form",
                explode=True) for name, text in (
             ("include", "Only these fields (dots reach into nested objects, e.g. "
                         "positions.secret; repeatable)."),
             ("exclude", "Leave these fields out (e.g. positions.downloads; repeatable; "
                         "applied after include)."))]),
    ]  # fmt: skip
