"""The ASGI application: routers, middleware, exception handlers."""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

import admit.all_tasks  # noqa: F401  (every package's job kinds and periodic tasks)
from admit import __version__
from admit.auth.authenticate import authenticate_request
from admit.auth.credentials import CredentialCache
from admit.carts.fastpath import create_cart
from admit.carts.routes import PATH as CARTS_PATH
from admit.carts.routes import router as carts_router
from admit.catalog.discounts.routes import router as discounts_router
from admit.catalog.items.routes import router as categories_items_router
from admit.catalog.questions.routes import router as questions_router
from admit.catalog.taxes.routes import router as taxes_router
from admit.checkin import lane as checkin_lane
from admit.checkin.routes import router as checkin_router
from admit.config import Settings
from admit.control.routes import mount_control
from admit.customers.routes import router as customers_router
from admit.db import create_database
from admit.devices.eventselection import router as eventselection_router
from admit.devices.routes import router as devices_router
from admit.events.detail_lane import PATH as EVENT_DETAIL_PATH
from admit.events.detail_lane import event_detail_lane
from admit.events.routes import router as events_router
from admit.events.settings_routes import router as event_settings_router
from admit.exports.routes import router as exporters_router
from admit.giftcards.routes import router as giftcards_router
from admit.invoices.routes import router as invoices_router
from admit.jobs.routes import router as jobs_router
from admit.jobs.runtime import Background
from admit.kit.http.conditional import conditional_layer
from admit.kit.http.edge import OUTER_LAYERS
from admit.kit.http.errors import install_error_handlers
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import API_PREFIX, install_slash_redirects, mount_routers
from admit.kit.http.transaction import SAFE_METHODS
from admit.kit.idempotency import layer as idempotency
from admit.kit.lanes import fastlane
from admit.kit.openapi.document import install_openapi
from admit.kit.resources.crud import MOUNTED
from admit.kit.resources.rendered import list_lane
from admit.kit.stamps.pagecache import PageCache, kept_route
from admit.oauth.routes import router as oauth_router
from admit.orders.action_routes import router as order_action_router
from admit.orders.change_routes import router as order_change_router
from admit.orders.kept_pages import KEPT_LISTS, ORDER_PAGES
from admit.orders.lane import create_order as order_lane
from admit.orders.money_routes import router as order_money_router
from admit.orders.print_logs import router as print_logs_router
from admit.orders.routes import router as orders_router
from admit.organizers.routes import router as organizers_router
from admit.organizers.saleschannels import router as saleschannels_router
from admit.organizers.settings_routes import router as organizer_settings_router
from admit.quotas.routes import availability_lane
from admit.quotas.routes import router as quotas_router
from admit.scheduled_exports.routes import router as scheduled_exports_router
from admit.seating.plans import router as seatingplans_router
from admit.seating.routes import router as seats_router
from admit.sendmail.routes import router as sendmail_router
from admit.shop import front_pages
from admit.shop.cart_lane import add as shop_cart_lane
from admit.shop.checkout_lane import checkout as shop_checkout_lane
from admit.shop.routes import PUBLIC_ROUTERS, mount_shop
from admit.shredders.routes import router as shredders_router
from admit.subevents.routes import router as subevents_router
from admit.teams.routes import router as teams_router
from admit.tickets.layout_routes import router as ticketlayouts_router
from admit.tickets.routes import router as tickets_router
from admit.tickets.secrets.failed import router as failed_checkins_router
from admit.tickets.secrets.routes import router as ticket_secrets_router
from admit.uploads.routes import router as uploads_router
from admit.users.accounts import prepare_login_timing
from admit.vouchers.routes import router as vouchers_router
from admit.waitinglist.routes import router as waitinglist_router
from admit.web.routes import mount_pages
from admit.webhooks.routes import router as webhooks_router

# Every API route comes from one of these routers (the access tests enumerate them).
API_ROUTERS = (
    checkin_router,  # first: the redeem hot path matches without scanning every other route
    organizers_router,
    organizer_settings_router,
    saleschannels_router,
    teams_router,
    events_router,
    event_settings_router,
    subevents_router,
    taxes_router,
    categories_items_router,
    questions_router,
    discounts_router,
    quotas_router,
    carts_router,
    orders_router,
    order_action_router,
    print_logs_router,
    order_money_router,
    order_change_router,
    seatingplans_router,
    seats_router,
    devices_router,
    eventselection_router,
    customers_router,
    webhooks_router,
    giftcards_router,
    vouchers_router,
    waitinglist_router,
    sendmail_router,
    scheduled_exports_router,
    jobs_router,
    oauth_router,
    shredders_router,
    uploads_router,
    ticketlayouts_router,
    tickets_router,
    ticket_secrets_router,
    failed_checkins_router,
    exporters_router,
    invoices_router,
)


# The hot requests that skip the framework when they are plain (see kit/lanes/fastlane.py).
LANE = fastlane.FastLane()
LANE.add("POST", f"{API_PREFIX}{CARTS_PATH}/", create_cart)
LANE.add("POST", f"{API_PREFIX}/organizers/{{organizer}}/events/{{event}}/orders/", order_lane)
LANE.add("POST", f"{API_PREFIX}/organizers/{{organizer}}/checkinrpc/redeem/", checkin_lane.redeem)
# The headless shop's rush: a cart with one ticket, its checkout (shop/*_lane.py).
SHOP = f"{API_PREFIX}/public/organizers/{{organizer}}/events/{{event}}"
LANE.add("POST", f"{SHOP}/carts/", shop_cart_lane)
LANE.add("POST", f"{SHOP}/checkout/", shop_checkout_lane)
LANE.add(
    "GET",
    f"{API_PREFIX}/organizers/{{organizer}}/events/{{event}}/quotas/{{id}}/availability/",
    availability_lane,
)
# The event detail: one statement, the body rendered once per row (events/detail_lane.py).
LANE.add("GET", f"{API_PREFIX}{EVENT_DETAIL_PATH}", event_detail_lane)
# Lists that integrations poll: every declared resource with a renderer (kit/resources/rendered.py).
for _resource in MOUNTED:
    if _resource.renderer is not None and "list" in _resource.actions:
        LANE.add("GET", f"{API_PREFIX}{_resource.path}/", list_lane(_resource), query=True)
# The order, position and check-in list pages, answered from kept pages when they hold.
for _path, _access, _allowed in KEPT_LISTS:
    LANE.add("GET", _path, kept_route(_access, ORDER_PAGES, _allowed), query=True)


# The shop's front pages, answered from kept pages for plain visitors (shop/front_pages.py);
# only paths the shop's front routes rendered are kept, so these templates answer nothing else.
LANE.add("GET", "/{organizer}/{event}/", front_pages.lane)
LANE.add("GET", "/{organizer}/{event}/{subevent}/", front_pages.lane)


# An edge layer wraps every HTTP request, the fast lane's included: it gets the next ASGI app
# inward and the settings, and returns its own ASGI app (which finds the application in
# ``scope["app"]``). A layer with nothing to do for a request must cost next to nothing: the
# rush paths go through every layer.
EdgeLayer = Callable[[ASGIApp, Settings], ASGIApp]
# Outermost first.
EDGE_LAYERS: tuple[EdgeLayer, ...] = (*OUTER_LAYERS, idempotency.layer, conditional_layer)


class AdmitAPI(FastAPI):
    """The application: the edge layers, then the fast lane in front of all the framework's
    middleware and routing."""

    edge: ASGIApp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        scope["app"] = self
        await self.edge(scope, receive, send)

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.state.db.fast.native:
            if await idempotency.before_framework(scope, send):
                await super().__call__(scope, receive, send)
            return
        limit = self.state.settings.max_body_bytes
        await fastlane.serve(LANE, scope, receive, send, self.framework, limit)

    def build_edge(self, layers: tuple[EdgeLayer, ...]) -> None:
        edge: ASGIApp = self._dispatch
        for layer in reversed(layers):
            edge = layer(edge, self.state.settings)
        self.edge = edge

    async def framework(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not await idempotency.before_framework(scope, send):
            return
        try:
            await super().__call__(scope, receive, send)
        finally:
            if scope["method"] not in SAFE_METHODS:
                # Writes are how credentials, teams and events change: this worker sees them
                # at once (the others once their cached entries expire).
                self.state.credential_cache.clear()


def settle_garbage_collector() -> None:
    """Everything alive once the application is loaded lives as long as the process: moved
    out of the collector's sight, so a full collection scans only what requests left behind
    (full collections over the whole heap were the slowest answers under load). Young
    collections run less often; requests make little cyclic garbage, refcounting frees the
    rest."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 50)


def log_gc_pauses(threshold_ms: float) -> None:
    """``ADMIT_LOG_GC_PAUSES_MS``: each collection at least ``threshold_ms`` long is logged
    with its generation, so a stall seen by a client can be matched to the collector or
    ruled out. Once per process."""
    if threshold_ms <= 0 or _gc_timer in gc.callbacks:
        return
    _gc_threshold[0] = threshold_ms / 1000
    gc.callbacks.append(_gc_timer)


_gc_threshold = [0.0]
_gc_started = [0.0]


def _gc_timer(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _gc_started[0] = time.perf_counter()
        return
    took = time.perf_counter() - _gc_started[0]
    if took >= _gc_threshold[0]:
        logging.getLogger("admit.gc").warning(
            "garbage collection of generation %d held the loop %.1f ms (%d collected)",
            info.get("generation", -1),
            took * 1000,
            info.get("collected", 0),
        )


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    database = create_database(
        settings.resolved_database_url,
        pool_size=settings.db_pool_size,
        echo=settings.sql_echo,
        pool_timeout=settings.db_pool_timeout,
    )

    background = Background.for_settings(settings, database)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        settle_garbage_collector()
        log_gc_pauses(settings.log_gc_pauses_ms)
        prepare_login_timing()
        # Embedded: this process runs the jobs it enqueues and the periodic work. With a
        # broker, workers run the jobs and ``admit scheduler`` the periodic work.
        async with background.serving(scheduler=background.embedded):
            yield
        await database.dispose()

    app = AdmitAPI(
        title="Admit",
        version=__version__,
        default_response_class=JSONResponse,
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        telemetry=None
        if settings.telemetry
        else {"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
    )
    app.state.settings = settings
    app.state.secret_key = settings.resolved_secret_key  # generated into the data dir once
    app.state.db = database
    app.state.background = background
    app.state.authenticator = authenticate_request
    app.state.credential_cache = CredentialCache(settings.credential_cache_seconds)
    app.state.page_cache = PageCache(int(settings.page_cache_mb * 1024 * 1024))

    mount_routers(app, API_ROUTERS)
    mount_pages(app)  # the HTML pages (login, settings, OAuth consent), not API routes
    mount_control(app)  # the back office under /control/
    # The public shop: its headless API (no credentials, so not among API_ROUTERS, whose
    # routes the generated tests hold to tokens, ETags and idempotency keys) and its pages,
    # which match any /{organizer}/{event}/ path and so come last.
    mount_routers(app, PUBLIC_ROUTERS)
    mount_shop(app)

    install_error_handlers(app)
    install_openapi(app, API_PREFIX)
    install_slash_redirects(app)
    app.build_edge(EDGE_LAYERS)

    return app
