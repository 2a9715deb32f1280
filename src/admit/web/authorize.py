"""The OAuth authorization endpoint, ``GET|POST /api/v1/oauth/authorize`` (code flow).

Authlib validates the request (client, exact redirect URI, response type, scopes, PKCE)
before anything else; errors that may not be sent back to an unverified redirect URI are shown
as a page. Then the user logs in (if needed) and sees the consent page naming the application
and its scopes, choosing which of their organizers it may reach. Allowing redirects back with a
code (single use, 10 minutes, bound to client, redirect URI and PKCE challenge); denying with
``error=access_denied``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from authlib.oauth2.rfc6749 import OAuth2Error
from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from admit.kit.http.context import Session, public_base_url
from admit.oauth import server
from admit.oauth.scopes import DESCRIPTIONS
from admit.oauth.store import Owner
from admit.users import accounts
from admit.web.forms import FormError, every, first, parse_pairs, read_form
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
PATH = "/api/v1/oauth/authorize"
OWN_FIELDS = frozenset({"csrf_token", "decision", "organizer"})


def _oauth_request(request: Request, params: list[tuple[str, str]]) -> Any:
    uri = public_base_url(request) + PATH
    return server.StarletteOAuth2Request("GET", uri, request.headers, params, [])


def _error_page(page: Page, error: OAuth2Error | None) -> Response:
    text = "The application sent an invalid authorization request"
    if error is not None:
        text += f" ({error.error}: {error.get_error_description() or 'no details'})"
    return page.message("Authorization failed", text + ".", 400)


def _redirect(triple: tuple[int, Any, list[tuple[str, str]]]) -> Response:
    location = dict(triple[2])["Location"]
    return RedirectResponse(location, status_code=302, headers={"Cache-Control": "no-store"})


async def _validate(page: Page, oauth_req: Any) -> tuple[Any, Response | None]:
    """Authlib's validation of the request: the grant, or the response to the error."""

    def work(srv: server.AdmitAuthorizationServer) -> Any:
        try:
            return srv.get_consent_grant(oauth_req, end_user=None), None
        except OAuth2Error as error:
            return None, (srv.handle_error_response(oauth_req, error), error)
        except ValueError:  # an error description quoting a malformed client value
            return None, (None, None)

    grant, failure = await page.session.run_sync(server.run, work)
    if failure is None:
        return grant, None
    triple, error = failure
    if triple is not None and error is not None and error.redirect_uri:
        return None, _redirect(triple)
    return None, _error_page(page, error)


@router.api_route(PATH, methods=["GET", "POST"])
async def authorize(request: Request, session: Session) -> Response:
    page = await Page.load(request, session)
    try:
        form = await read_form(request) if request.method == "POST" else []
        query = parse_pairs(request.url.query)
    except FormError as exc:
        return page.message("Bad request", exc.message, exc.status)
    deciding = request.method == "POST" and any(k == "decision" for k, _ in form)
    params = [(k, v) for k, v in (*query, *form) if k not in OWN_FIELDS]
    try:
        oauth_req = _oauth_request(request, params)
    except OAuth2Error as error:  # plain http to a host that is not this machine
        return _error_page(page, error)
    grant, failure = await _validate(page, oauth_req)
    if failure is not None:
        return failure
    if gate := page.gate():
        if request.method == "POST":
            # Log in first, then come back to the same request as a GET.
            back = f"{PATH}?{urlencode(params)}"
            return page.redirect(f"/login?next={quote(back, safe='')}")
        return gate
    assert page.user is not None
    organizers = await accounts.user_organizers(session, page.user.id)
    context = {
        "client_name": grant.client.name,
        "scopes": [(s, DESCRIPTIONS[s]) for s in grant.request.scope.split()],
        "params": params,
        "organizers": organizers,
        "redirect_uri": grant.redirect_uri,
        "error": None,
        "chosen": set(),
    }
    if not deciding:
        return page.render("consent.html", **context)
    if refused := page.refuse_csrf(form):
        return refused
    allowed = first(form, "decision") == "allow"
    owner = None
    chosen_ids: list[int] = []
    if allowed:
        valid = {o.id for o in organizers}
        chosen_ids = [int(v) for v in every(form, "organizer") if v.isdigit() and int(v) in valid]
        if organizers and not chosen_ids:
            context["error"] = "Choose at least one organizer the application may access."
            return page.render("consent.html", 400, **context)
        owner = Owner(page.user.id)

    def respond(srv: server.AdmitAuthorizationServer) -> Any:
        oauth_req = _oauth_request(request, params)
        oauth_req.organizer_ids = chosen_ids
        consent = srv.get_consent_grant(oauth_req, end_user=page.user)
        return srv.create_authorization_response(oauth_req, grant_user=owner, grant=consent)

    try:
        triple = await session.run_sync(server.run, respond)
    except (OAuth2Error, ValueError):
        return _error_page(page, None)
    if triple[0] != 302:
        return _error_page(page, None)
    return _redirect(triple)
