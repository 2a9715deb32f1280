"""The headless shop's ``POST …/carts/`` in the fast lane (PostgreSQL): a new cart with one
plain ticket, the rush's request, past the framework.

The shop's rules for it (``cart.add``: the shop open, the product on sale, no voucher needed,
the per-order limits) run on the worker's kept catalog (``lane_shared.py``); the position is
written by the cart's one batched call (``carts/fastpath.sell_plain``), and the answer is the
cart as ``cart.view`` prices it (``cart.priced_cart``, on the kept tax rules and discounts).
Anything else (a cart id, a voucher, a date, a count or price, a product with bundles or
required add-ons, a refusal of any kind) goes to the route before anything is written.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pydantic import ValidationError
from sqlalchemy import inspect
from starlette.responses import Response

from admit.carts import fastpath
from admit.carts.schemas import CartPositionIn
from admit.kit.http.errors import FieldErrors
from admit.kit.http.responses import JSONResponse
from admit.kit.lanes.fastlane import LaneRequest
from admit.models import CartPosition
from admit.quotas.availability import quota_busy, sold_out_message
from admit.shop import cart, catalog, lane_shared
from admit.shop.schemas import CartIn
from admit.shop.settings import setting

_FIELDS = frozenset(CartIn.model_fields)
# The new row as ``priced_cart`` reads it: every column of a CartPosition, unset ones None
# as on an unsaved ORM object, without building one (its instrumentation cost the lane more
# than pricing the cart).
_UNSET = dict.fromkeys(a.key for a in inspect(CartPosition).column_attrs)


def _plain(raw: dict[str, Any]) -> CartIn | None:
    if not raw.keys() <= _FIELDS or raw.get("cart_id") or raw.get("voucher"):
        return None
    if raw.get("subevent") is not None:
        return None
    try:
        data = CartIn.model_validate(raw)
    except ValidationError:
        return None
    if len(data.products) != 1:
        return None
    want = data.products[0]
    return data if want.count == 1 and want.price is None else None


async def add(request: LaneRequest) -> Response | None:
    """The lane handler of ``POST …/public/…/carts/``; None for what it leaves."""
    raw = request.json_object()
    data = _plain(raw) if raw is not None else None
    if data is None:
        return None
    return await lane_shared.serve(request, lambda shop: _add(shop, data))


async def _add(shop: lane_shared.Shop, data: CartIn) -> Response | None:
    event, now = shop.event, shop.now
    want = data.products[0]
    item = shop.extras.plain(want.item)
    if item is None:
        return None
    variation = None
    if want.variation is not None:
        variation = next((v for v in item.variations if v.id == want.variation), None)
    if item.variations and (variation is None or not variation.active):
        return None
    if catalog.window_refusal(item, now, None, variation) or catalog.voucher_refusal(
        item, variation, None
    ):
        return None
    if int(setting(event, "max_items_per_order")) < 1 or (
        item.max_per_order and item.max_per_order < 1
    ):
        return None
    cart_id = cart.new_cart_id()
    position = CartPositionIn(
        item=item.id,
        variation=variation.id if variation else None,
        price=catalog.voucher_price(None, item, variation, None),
        expires=now + cart.RESERVATION,
    ).model_copy(update={"cart_id": cart_id})
    kind, value = await fastpath.sell_plain(shop.session, event, position, cart_id)
    if kind == "sold_out":
        raise FieldErrors.general(sold_out_message(value, 0))
    if kind == "busy":
        raise quota_busy()
    if kind != "created":
        return None
    row = SimpleNamespace(
        **_UNSET
        | {
            "id": value,
            "event_id": event.id,
            "cart_id": cart_id,
            "item_id": position.item,
            "variation_id": position.variation,
            "subevent_id": None,
            "price": position.price,
            "voucher_id": None,
            "addon_to_id": None,
            "is_bundled": False,
            "seat_id": None,
            "expires": position.expires,
        }
    )
    copy = shop.copy
    priced = cart.priced_cart(
        event,
        cart_id,
        [row],  # type: ignore[list-item]
        {item.id: item},
        {},
        {},
        copy.rules,
        copy.discounts,
        now,
    )
    return JSONResponse(priced.as_dict(now), status_code=201)
