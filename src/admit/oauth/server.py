"""Authlib's OAuth 2 server core, glued to Starlette requests and Admit's storage.

Authlib ships no FastAPI/Starlette server integration, so this module supplies the framework
part of its generic :class:`~authlib.oauth2.rfc6749.AuthorizationServer`: an ``OAuth2Request``
built from a Starlette request (query and form read beforehand, since Authlib is
synchronous), and responses as ``(status, body, headers)`` triples the endpoints turn into
Starlette responses. The protocol itself (grants, client authentication, PKCE, revocation,
error responses) is Authlib's; the subclasses below only add Admit's storage and its rules:

* codes for public clients need PKCE, and only ``S256`` is accepted;
* a refresh token lasts (as the spec says: it never expires and yields a new access token at
  any time): a refresh answers a new access token with the same refresh token, and the
  previous access token stops working at once; revocation still ends both;
* ``invalid_client`` is always 401 with ``WWW-Authenticate: Basic``.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from authlib.oauth2.rfc6749 import (
    AuthorizationServer,
    InvalidClientError,
    InvalidRequestError,
    OAuth2Error,
    OAuth2Payload,
    OAuth2Request,
)
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant, RefreshTokenGrant
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from sqlalchemy.orm import Session

from admit.auth.credentials import generate_token
from admit.oauth.scopes import SCOPES
from admit.oauth.store import ACCESS_TOKEN_SECONDS, Code, Owner, Store, Token

CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]
Triple = tuple[int, Any, list[tuple[str, str]]]


class Payload(OAuth2Payload):
    """Request parameters: the first value of each for ``data``, all of them in ``datalist``
    (Authlib refuses repeated parameters through it)."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self._data: dict[str, str] = {}
        self._datalist: defaultdict[str, list[str]] = defaultdict(list)
        for key, value in pairs:
            self._data.setdefault(key, value)
            self._datalist[key].append(value)

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> defaultdict[str, list[str]]:
        return self._datalist


class StarletteOAuth2Request(OAuth2Request):
    """An ``OAuth2Request`` from a Starlette request's parts. ``uri`` is the public URL the
    client used: Authlib refuses plain HTTP except to loopback addresses."""

    def __init__(
        self,
        method: str,
        uri: str,
        headers: Mapping[str, str],
        query: list[tuple[str, str]],
        form: list[tuple[str, str]],
    ) -> None:
        super().__init__(method, uri, headers=headers)
        self._args = dict(reversed(query))  # first value wins, as in data
        self._form = dict(reversed(form))
        self.payload = Payload([*query, *form])
        # The organizers the user chose on the consent page (stored with the code).
        self.organizer_ids: list[int] = []

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class S256CodeChallenge(CodeChallenge):
    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: Any) -> None:
        super().validate_code_challenge(grant, redirect_uri)
        data = grant.request.payload.data
        if data.get("code_challenge"):
            if data.get("code_challenge_method") != "S256":
                raise InvalidRequestError("'code_challenge_method' must be 'S256'.")
        elif grant.request.client.public:
            raise InvalidRequestError("Public clients must send a PKCE 'code_challenge'.")


class CodeGrant(AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = CLIENT_AUTH_METHODS

    @property
    def store(self) -> Store:
        return self.server.store

    def save_authorization_code(self, code: str, request: StarletteOAuth2Request) -> None:
        self.store.save_code(code, request.client, request.user, request.scope, request)

    def query_authorization_code(self, code: str, client: Any) -> Code | None:
        return self.store.query_code(code, client)

    def delete_authorization_code(self, authorization_code: Code) -> None:
        self.store.spend_code(authorization_code)

    def authenticate_user(self, authorization_code: Code) -> Owner | None:
        return self.store.owner(authorization_code.user_id, authorization_code.grant_id)


class RefreshGrant(RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = CLIENT_AUTH_METHODS
    # The refresh token stays: the answer repeats it (a client that stores what it gets back
    # and one that keeps the first both work), only the access token is new.
    INCLUDE_NEW_REFRESH_TOKEN = False

    def authenticate_refresh_token(self, refresh_token: str) -> Token | None:
        return self.server.store.refresh_token(refresh_token)

    def authenticate_user(self, refresh_token: Token) -> Owner | None:
        return self.server.store.owner(refresh_token.user_id, refresh_token.grant_id)

    def save_token(self, token: dict[str, Any]) -> None:
        token["refresh_token"] = self.request.payload.data["refresh_token"]
        # The new access token replaces the previous one in the same row: that one is dead.
        self.server.store.renew_access(self.request.refresh_token, token)

    def revoke_old_credential(self, refresh_token: Token) -> None:
        pass  # the previous access token was replaced in save_token; the refresh token lasts


class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = CLIENT_AUTH_METHODS

    def create_endpoint_response(self, request: OAuth2Request) -> Triple:
        # A request without a token is malformed whoever sends it: said before the client
        # is authenticated.
        self.check_params(request, None)
        return super().create_endpoint_response(request)

    def query_token(self, token_string: str, token_type_hint: str | None) -> Token | None:
        return self.server.store.find_token(token_string, token_type_hint)

    def revoke_token(self, token: Token, request: OAuth2Request) -> None:
        # An access token alone leaves its refresh token usable; a refresh token takes the
        # access token issued with it along.
        self.server.store.revoke(token.id, refresh=token.kind == "refresh_token")


def _new_token(**_: Any) -> str:
    return generate_token()


class AdmitAuthorizationServer(AuthorizationServer):
    """One per request: it carries the request's store (session and clock)."""

    def __init__(self, store: Store) -> None:
        super().__init__(scopes_supported=list(SCOPES))
        self.store = store
        self.register_grant(CodeGrant, [S256CodeChallenge(required=True)])
        self.register_grant(RefreshGrant)
        self.register_endpoint(Revocation)
        self.register_token_generator(
            "default", BearerTokenGenerator(_new_token, _new_token, ACCESS_TOKEN_SECONDS)
        )

    def query_client(self, client_id: str) -> Any:
        return self.store.client(client_id)

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        self.store.save_token(token, request.user)

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        assert isinstance(request, OAuth2Request)  # built by the endpoint beforehand
        return request

    def create_json_request(self, request: Any) -> Any:
        raise NotImplementedError("no JSON endpoints")

    def handle_response(self, status: int, body: Any, headers: Any) -> Triple:
        return status, body, list(headers)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    def handle_error_response(self, request: Any, error: OAuth2Error) -> Triple:
        if isinstance(error, InvalidClientError) and not error.redirect_uri:
            error.status_code = 401  # and so WWW-Authenticate: Basic (RFC 6749 §5.2)
        return super().handle_error_response(request, error)


def run(session: Session, work: Any) -> Any:
    """Runs ``work(server)`` with a server bound to this (synchronous) session."""
    return work(AdmitAuthorizationServer(Store(session, dt.datetime.now(dt.UTC))))
