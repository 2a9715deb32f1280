"""``POST /api/v1/oauth/token``, ``GET|POST /api/v1/oauth/revoke_token`` and ``GET
/api/v1/me``. The first two speak RFC 6749 / RFC 7009 (form bodies, ``{"error": ...}``
answers) through Authlib; the authorization endpoint is a page (``admit.web.authorize``)."""

from __future__ import annotations

from typing import Annotated, Any

from authlib.oauth2.rfc6749 import InvalidRequestError, OAuth2Error
from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from admit.db import write_intent
from admit.kit.http.context import Principal, Session, public_base_url
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import API_PREFIX, api_router
from admit.kit.idempotency.secret import secret_bearing
from admit.models import User
from admit.oauth import server
from admit.oauth.access import ClientCredentials, ProfileAccess
from admit.web.forms import FormError, parse_pairs, read_form

router = api_router(tags=["OAuth and profile"])
# Tokens in the answer, and a repeated code exchange must count as the code's reuse.
secret_bearing("POST", f"{API_PREFIX}/oauth/token")


def oauth_response(triple: tuple[int, Any, list[tuple[str, str]]]) -> JSONResponse:
    status, body, headers = triple
    response = JSONResponse(body if body != "" else {}, status_code=status)
    for name, value in headers:
        if name.lower() != "content-type":
            response.headers[name] = value
    return response


async def oauth_request(
    request: Request, *, with_form: bool = True
) -> server.StarletteOAuth2Request:
    """Raises OAuth2Error for a body that is no form, or an insecure transport."""
    try:
        form = await read_form(request) if with_form else []
        query = parse_pairs(request.url.query)
    except FormError as exc:
        raise InvalidRequestError(exc.message) from None
    if request.method == "GET":
        # The declared GET revocation carries its parameters in the query: Authlib's
        # endpoint reads them as the form.
        form, query = query, []
    uri = public_base_url(request) + request.url.path
    return server.StarletteOAuth2Request(request.method, uri, request.headers, query, form)


async def _run(session: AsyncSession, request: Request, work: Any) -> JSONResponse:
    try:
        oauth_req = await oauth_request(request)
        triple = await session.run_sync(server.run, lambda srv: work(srv, oauth_req))
    except OAuth2Error as error:
        triple = error()
    except ValueError:
        # Authlib refuses to build an error description from characters outside the
        # RFC's set (a client-supplied value quoted in it): the same error, undescribed.
        triple = InvalidRequestError()()
    return oauth_response(triple)


def _form(required: list[str], **fields: str) -> dict[str, Any]:
    """``openapi_extra`` for a form body of string fields (name -> description)."""
    properties = {name: {"type": "string", "description": text} for name, text in fields.items()}
    schema = {"type": "object", "properties": properties, "required": required}
    form = {"application/x-www-form-urlencoded": {"schema": schema}}
    return {"requestBody": {"required": True, "content": form}}


@router.post(
    "/oauth/token",
    summary="Obtain or refresh OAuth tokens",
    openapi_extra=_form(
        ["grant_type"],
        grant_type="`authorization_code` or `refresh_token`",
        code="The authorization code (authorization_code)",
        redirect_uri="The redirect URI the code was issued for (authorization_code)",
        code_verifier="The PKCE verifier (authorization_code)",
        refresh_token="The refresh token (refresh_token)",
        client_id="The client ID, when not sent with HTTP Basic",
        client_secret="The client secret, when not sent with HTTP Basic",
    ),
)
async def token(
    request: Request, session: Annotated[AsyncSession, Depends(ClientCredentials())]
) -> JSONResponse:
    """HTTP Basic (or ``client_id``/``client_secret`` in the form); ``grant_type``
    ``authorization_code`` (``code``, ``redirect_uri``, ``code_verifier``) or ``refresh_token``
    (``refresh_token``). 200 with the OAuth token response; RFC 6749 §5.2 errors."""
    return await _run(session, request, lambda srv, req: srv.create_token_response(req))


async def _revoke(request: Request, session: AsyncSession) -> JSONResponse:
    if request.method == "GET":
        # GET requests run on a read-only session: revocation needs a writing one.
        intent = write_intent.set(True)
        try:
            async with request.app.state.db.sessionmaker() as writer:
                response = await _run(writer, request, _revocation)
                await writer.commit()
                return response
        finally:
            write_intent.reset(intent)
    return await _run(session, request, _revocation)


def _revocation(srv: server.AdmitAuthorizationServer, req: Any) -> Any:
    return srv.create_endpoint_response("revocation", req)


REVOKE_DOC = """``token`` (and optionally ``token_type_hint``); 200 ``{}`` also for unknown tokens
(RFC 7009). Revoking an access token keeps its refresh token; revoking a refresh token revokes
its access token too."""


@router.post(
    "/oauth/revoke_token",
    summary="Revoke an access or refresh token",
    description=REVOKE_DOC,
    openapi_extra=_form(
        ["token"],
        token="The access or refresh token to revoke",
        token_type_hint="`access_token` or `refresh_token`",
    ),
)
async def revoke_token(
    request: Request, session: Annotated[AsyncSession, Depends(ClientCredentials())]
) -> JSONResponse:
    return await _revoke(request, session)


@router.get(
    "/oauth/revoke_token",
    summary="Revoke an access or refresh token (query parameters)",
    description=REVOKE_DOC,
)
async def revoke_token_get(
    request: Request, session: Annotated[AsyncSession, Depends(ClientCredentials())]
) -> JSONResponse:
    return await _revoke(request, session)


@router.get("/me", summary="The authenticated user's profile")
async def me(
    principal: Annotated[Principal, Depends(ProfileAccess())], session: Session
) -> dict[str, Any]:
    """The authenticated user's profile

    Answers the e-mail, name and locale of the user an OAuth access token acts for.
    """
    user = await session.get(User, principal.user_id)
    assert user is not None  # the Bearer lookup joined the active user
    return {
        "email": user.email,
        "fullname": user.fullname or "",
        "locale": user.locale,
        "is_staff": user.is_staff,
        "timezone": user.timezone,
    }
