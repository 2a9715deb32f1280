"""Where the shop meets the application: its pages (after every other route, since the shop's
paths match any organizer and event slug) and the refused-form answer."""

from __future__ import annotations

from fastapi import FastAPI

from admit.shop.order_pages import router as order_router
from admit.shop.pages import Refused, refused_page
from admit.shop.pages import router as pages_router
from admit.shop.render import static_router
from admit.shop.waiting_pages import router as waiting_router


def mount_shop(app: FastAPI) -> None:
    for router in (static_router, order_router, waiting_router, pages_router):
        app.router.routes.extend(router.routes)
    app.add_exception_handler(Refused, refused_page)
