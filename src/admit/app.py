"""The ASGI application: routers, middleware, exception handlers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from admit import __version__
from admit.auth.authenticate import authenticate_request
from admit.carts.routes import router as carts_router
from admit.carts.service import purge_expired
from admit.catalog.discounts.routes import router as discounts_router
from admit.catalog.items.routes import router as categories_items_router
from admit.catalog.questions.routes import router as questions_router
from admit.catalog.taxes.routes import router as taxes_router
from admit.config import Settings
from admit.db import create_database, utcnow
from admit.events.routes import router as events_router
from admit.kit import periodic
from admit.kit.errors import install_error_handlers
from admit.kit.openapi import install_openapi
from admit.kit.periodic import PeriodicJob
from admit.kit.responses import JSONResponse
from admit.kit.routing import API_PREFIX, mount_routers
from admit.orders.routes import router as orders_router
from admit.organizers.routes import router as organizers_router
from admit.quotas.routes import router as quotas_router
from admit.subevents.routes import router as subevents_router
from admit.teams.routes import router as teams_router

# Every API route comes from one of these routers (the access tests enumerate them).
API_ROUTERS = (
    organizers_router,
    teams_router,
    events_router,
    subevents_router,
    taxes_router,
    categories_items_router,
    questions_router,
    discounts_router,
    quotas_router,
    carts_router,
    orders_router,
)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    database = create_database(
        settings.resolved_database_url, pool_size=settings.db_pool_size, echo=settings.sql_echo
    )

    jobs = [
        PeriodicJob("purge expired cart positions", 60, lambda s: purge_expired(s, utcnow())),
    ]

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        async with periodic.running(database, jobs):
            yield
        await database.dispose()

    app = FastAPI(
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
    app.state.authenticator = authenticate_request

    mount_routers(app, API_ROUTERS)

    install_error_handlers(app)
    install_openapi(app, API_PREFIX)

    return app
