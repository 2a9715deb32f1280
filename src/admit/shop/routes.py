"""Where the shop meets the application: its pages (after every other route, since the shop's
paths match any organizer and event slug) and the refused-form answer."""

from __future__ import annotations

import re

from fastapi import FastAPI
from starlette.routing import Route

from admit.shop.account_home import router as account_home_router
from admit.shop.account_pages import router as account_router
from admit.shop.addon_pages import router as addon_router
from admit.shop.api import router as api_router
from admit.shop.checkout_pages import router as checkout_router
from admit.shop.customer_api import router as customer_api_router
from admit.shop.order_forms import router as order_forms_router
from admit.shop.order_invoices import router as invoice_router
from admit.shop.order_pages import router as order_router
from admit.shop.pages import Refused, refused_page
from admit.shop.pages import router as pages_router
from admit.shop.render import static_router
from admit.shop.waiting_pages import router as waiting_router

# First path segments that are never an organizer's shop: an unknown API path keeps the API's
# JSON 404 (and a server still starting answers it without touching the database).
RESERVED = ("api",)
# The headless checkout's JSON routes: no credentials, so mounted apart from the API routers,
# but part of the API's document.
PUBLIC_ROUTERS = (api_router, customer_api_router)
_ORGANIZER = "^/(?P<organizer>"


def _not_reserved(route: Route) -> Route:
    pattern = route.path_regex.pattern
    if pattern.startswith(_ORGANIZER):
        guard = "^/(?!(?:" + "|".join(map(re.escape, RESERVED)) + ")/)(?P<organizer>"
        route.path_regex = re.compile(guard + pattern[len(_ORGANIZER) :])
    return route


def mount_shop(app: FastAPI) -> None:
    for router in (
        static_router,
        # before the event's pages: ``/{organizer}/account/`` would match ``/{organizer}/{event}/``
        account_router,
        account_home_router,
        order_router,
        order_forms_router,
        invoice_router,
        waiting_router,
        checkout_router,
        addon_router,
        pages_router,
    ):
        app.router.routes.extend(_not_reserved(route) for route in router.routes)  # type: ignore[arg-type]
    app.add_exception_handler(Refused, refused_page)
