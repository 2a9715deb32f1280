"""The back office's pages, placed on the application like the other pages (HTML answers,
not in the OpenAPI document)."""

from __future__ import annotations

from fastapi import FastAPI

from admit.control import (
    areas,
    catalog,
    checkin,
    checkin_history,
    customers,
    dashboard,
    devices,
    events,
    exports,
    giftcards,
    home,
    order_page,
    order_positions,
    order_refunds,
    order_tickets,
    orders,
    scheduled,
    teams,
    vouchers,
    webhooks,
)
from admit.control.render import static_router

CONTROL_ROUTERS = (
    home.router,
    dashboard.router,
    orders.router,
    order_page.router,
    order_refunds.router,
    order_positions.router,
    order_tickets.router,
    checkin.router,
    checkin_history.router,
    catalog.router,
    events.router,
    vouchers.router,
    areas.router,
    exports.router,
    scheduled.router,
    devices.router,
    webhooks.router,
    teams.router,
    giftcards.router,
    customers.router,
    static_router,
)


def mount_control(app: FastAPI) -> None:
    for router in CONTROL_ROUTERS:
        app.router.routes.extend(router.routes)
