"""A user's own OAuth applications: create (the secret is shown once), new secret, delete."""

from __future__ import annotations

from fastapi import APIRouter, Request
from sqlalchemy import select
from starlette.responses import Response

from admit.kit.http.context import Session
from admit.models import OAuthApplication
from admit.oauth import apps
from admit.web.forms import first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)


async def _own(page: Page, app_id: int) -> OAuthApplication | None:
    app = await page.session.get(OAuthApplication, app_id)
    if app is None or page.user is None or app.owner_id != page.user.id:
        return None  # someone else's application is as unknown as a missing one
    return app


@router.get("/settings/apps/")
async def list_apps(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    assert page.user is not None
    query = (
        select(OAuthApplication)
        .where(OAuthApplication.owner_id == page.user.id)
        .order_by(OAuthApplication.name, OAuthApplication.id)
    )
    own = (await session.execute(query)).scalars().all()
    return page.render("apps.html", apps=own)


@router.get("/settings/apps/new")
async def new_form(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    return page.render("app_new.html", name="", redirect_uris="", public=False, errors=[])


@router.post("/settings/apps/new")
async def create(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    pairs, refused = await page.post()
    if refused:
        return refused
    assert page.user is not None
    name = first(pairs, "name").strip()
    uris_text = first(pairs, "redirect_uris")
    uris = [line.strip() for line in uris_text.splitlines() if line.strip()]
    public = first(pairs, "public") == "on"
    errors = apps.name_problems(name) + apps.redirect_uri_problems(uris)
    if errors:
        return page.render(
            "app_new.html", 400, name=name, redirect_uris=uris_text, public=public, errors=errors
        )
    app, secret = await apps.create(session, name, uris, owner_id=page.user.id, public=public)
    return page.render("app_secret.html", 201, app=app, secret=secret, new=True)


@router.get("/settings/apps/{app_id}/")
async def detail(request: Request, session: Session, app_id: int) -> Response:
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    app = await _own(page, app_id)
    if app is None:
        return page.not_found()
    return page.render("app_detail.html", app=app)


@router.post("/settings/apps/{app_id}/secret")
async def rotate(request: Request, session: Session, app_id: int) -> Response:
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    _, refused = await page.post()
    if refused:
        return refused
    app = await _own(page, app_id)
    if app is None:
        return page.not_found()
    secret = apps.new_secret(app)
    return page.render("app_secret.html", app=app, secret=secret, new=False)


@router.post("/settings/apps/{app_id}/delete")
async def delete(request: Request, session: Session, app_id: int) -> Response:
    page = await Page.load(request, session)
    if gate := page.gate():
        return gate
    _, refused = await page.post()
    if refused:
        return refused
    app = await _own(page, app_id)
    if app is None:
        return page.not_found()
    await apps.remove(session, app)
    page.web.flash(f"The application {app.name} was deleted.")
    return page.redirect("/settings/apps/")
