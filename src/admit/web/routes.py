"""All pages, placed on the application (not API routes: no OpenAPI, HTML answers)."""

from __future__ import annotations

from fastapi import FastAPI

from admit.web import applications, authorize, invite, login, settings
from admit.web.page import HostRefused, host_refused_page
from admit.web.render import static_router

PAGE_ROUTERS = (
    login.router,
    settings.router,
    applications.router,
    invite.router,
    authorize.router,
    static_router,
)


def mount_pages(app: FastAPI) -> None:
    for router in PAGE_ROUTERS:
        app.router.routes.extend(router.routes)
    app.add_exception_handler(HostRefused, host_refused_page)
