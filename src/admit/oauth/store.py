"""What the OAuth server reads and writes, on the synchronous session Authlib's callbacks get.

Authlib's server core is synchronous; the endpoints run it inside ``AsyncSession.run_sync``, so
these callbacks use the request's own session and transaction. Secrets are looked up by their
SHA-256 only. Rows a grant is decided on (a code, a refresh token) are read ``FOR UPDATE``:
two requests racing with one code or one refresh token cannot both win.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, TokenMixin
from sqlalchemy import insert, or_, select, update
from sqlalchemy.orm import Session

from admit.auth.credentials import hash_token
from admit.models import (
    OAuthApplication,
    OAuthCode,
    OAuthGrant,
    OAuthToken,
    User,
    oauth_grant_organizers,
)
from admit.oauth.scopes import canonical_scope

CODE_SECONDS = 600
ACCESS_TOKEN_SECONDS = 86400
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
SECRET_METHODS = frozenset({"client_secret_basic", "client_secret_post"})


@dataclass
class Client(ClientMixin):
    id: int
    client_id: str
    secret_hash: str | None
    redirect_uris: list[str]
    name: str

    @property
    def public(self) -> bool:
        return self.secret_hash is None

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        # Only an unambiguous one: with several registered the request must name one.
        return self.redirect_uris[0] if len(self.redirect_uris) == 1 else None

    def get_allowed_scope(self, scope: str | None) -> str:
        return canonical_scope(scope)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris  # exact match, no prefix or pattern

    def check_client_secret(self, client_secret: str) -> bool:
        import hmac

        if self.secret_hash is None:
            return False
        return hmac.compare_digest(hash_token(client_secret), self.secret_hash)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "none" if self.public else method in SECRET_METHODS

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in GRANT_TYPES


@dataclass(frozen=True)
class Owner:
    """The resource owner a code or token acts for, and the consent it came from."""

    user_id: int
    grant_id: int | None = None


@dataclass
class Code(AuthorizationCodeMixin):
    id: int
    grant_id: int
    user_id: int
    redirect_uri: str
    scope: str
    code_challenge: str | None
    code_challenge_method: str | None

    def get_redirect_uri(self) -> str | None:
        return self.redirect_uri or None

    def get_scope(self) -> str:
        return self.scope


@dataclass
class Token(TokenMixin):
    id: int
    kind: str  # "access_token" or "refresh_token": which of the row's two was presented
    grant_id: int
    application_id: int
    user_id: int
    scope: str

    def check_client(self, client: Client) -> bool:
        return self.application_id == client.id

    def get_scope(self) -> str:
        return self.scope


@dataclass
class Store:
    session: Session
    now: dt.datetime
    _clients: dict[str, Client | None] = field(default_factory=dict)

    # -- clients -------------------------------------------------------------------------

    def client(self, client_id: Any) -> Client | None:
        if not isinstance(client_id, str) or not client_id or len(client_id) > 64:
            return None
        if client_id not in self._clients:
            app = self.session.execute(
                select(OAuthApplication).where(OAuthApplication.client_id == client_id)
            ).scalar_one_or_none()
            self._clients[client_id] = (
                None
                if app is None
                else Client(
                    app.id, app.client_id, app.secret_hash, list(app.redirect_uris), app.name
                )
            )
        return self._clients[client_id]

    # -- authorization codes ------------------------------------------------------------

    def save_code(self, code: str, client: Client, owner: Owner, scope: str, request: Any) -> None:
        """The consent (a grant naming the chosen organizers) and its code."""
        grant = OAuthGrant(application_id=client.id, user_id=owner.user_id, scope=scope)
        self.session.add(grant)
        self.session.flush()
        organizer_ids = sorted(set(getattr(request, "organizer_ids", ())))
        if organizer_ids:
            self.session.execute(
                insert(oauth_grant_organizers),
                [{"grant_id": grant.id, "organizer_id": o} for o in organizer_ids],
            )
        data = request.payload.data
        self.session.add(
            OAuthCode(
                code_hash=hash_token(code),
                grant_id=grant.id,
                redirect_uri=request.payload.redirect_uri or "",
                code_challenge=data.get("code_challenge") or None,
                code_challenge_method=data.get("code_challenge_method") or None,
                expires=self.now + dt.timedelta(seconds=CODE_SECONDS),
            )
        )
        self.session.flush()

    def query_code(self, code: Any, client: Client) -> Code | None:
        """The unspent, unexpired code issued to ``client``. A spent one is a replay: the
        tokens issued from it are revoked (RFC 6749 §4.1.2)."""
        if not isinstance(code, str) or not code:
            return None
        query = (
            select(OAuthCode, OAuthGrant.user_id, OAuthGrant.scope)
            .join(OAuthGrant, OAuthGrant.id == OAuthCode.grant_id)
            .where(
                OAuthCode.code_hash == hash_token(code),
                OAuthGrant.application_id == client.id,
            )
            .with_for_update(of=OAuthCode)
        )
        row = self.session.execute(query).one_or_none()
        if row is None:
            return None
        stored, user_id, scope = row
        if stored.used is not None:
            self.revoke_grant(stored.grant_id)
            return None
        if stored.expires <= self.now:
            return None
        return Code(
            stored.id,
            stored.grant_id,
            user_id,
            stored.redirect_uri,
            scope,
            stored.code_challenge,
            stored.code_challenge_method,
        )

    def spend_code(self, code: Code) -> None:
        self.session.execute(update(OAuthCode).where(OAuthCode.id == code.id).values(used=self.now))

    # -- tokens -------------------------------------------------------------------------

    def owner(self, user_id: int, grant_id: int) -> Owner | None:
        user = self.session.get(User, user_id)
        if user is None or not user.is_active:
            return None
        return Owner(user_id, grant_id)

    def save_token(self, token: dict[str, Any], owner: Owner) -> None:
        refresh = token.get("refresh_token")
        self.session.add(
            OAuthToken(
                grant_id=owner.grant_id,
                access_hash=hash_token(token["access_token"]),
                refresh_hash=hash_token(refresh) if refresh else None,
                scope=token.get("scope") or "",
                expires=self.now + dt.timedelta(seconds=int(token["expires_in"])),
            )
        )
        self.session.flush()

    def _token_query(self) -> Any:
        return select(
            OAuthToken.id,
            OAuthToken.grant_id,
            OAuthGrant.application_id,
            OAuthGrant.user_id,
            OAuthToken.scope,
            OAuthToken.refresh_revoked,
        ).join(OAuthGrant, OAuthGrant.id == OAuthToken.grant_id)

    def refresh_token(self, refresh: Any) -> Token | None:
        """The unrevoked refresh token, locked (two refreshes at once take turns). Its scope
        is the consent's: a refresh that asked for less narrows that access token only."""
        if not isinstance(refresh, str) or not refresh:
            return None
        query = (
            self._token_query()
            .add_columns(OAuthGrant.scope.label("granted"))
            .where(OAuthToken.refresh_hash == hash_token(refresh))
            .with_for_update(of=OAuthToken)
        )
        row = self.session.execute(query).one_or_none()
        if row is None or row.refresh_revoked:
            return None
        return Token(row[0], "refresh_token", row[1], row[2], row[3], row.granted)

    def renew_access(self, refresh: Token, token: dict[str, Any]) -> None:
        """A new access token for a refresh token's row: the previous one (its hash replaced)
        stops working at once; the refresh token stays as it is."""
        self.session.execute(
            update(OAuthToken)
            .where(OAuthToken.id == refresh.id)
            .values(
                access_hash=hash_token(token["access_token"]),
                access_revoked=False,
                scope=token.get("scope") or "",
                expires=self.now + dt.timedelta(seconds=int(token["expires_in"])),
            )
        )

    def find_token(self, value: Any, hint: str | None) -> Token | None:
        """An access or refresh token by its value (the hint only says which to try first)."""
        if not isinstance(value, str) or not value:
            return None
        digest = hash_token(value)
        kinds = ["access_token", "refresh_token"]
        if hint == "refresh_token":
            kinds.reverse()
        for kind in kinds:
            column = OAuthToken.access_hash if kind == "access_token" else OAuthToken.refresh_hash
            row = self.session.execute(self._token_query().where(column == digest)).one_or_none()
            if row is not None:
                return Token(row[0], kind, row[1], row[2], row[3], row[4])
        return None

    def revoke(self, token_id: int, *, refresh: bool) -> None:
        """Revokes the access token; with ``refresh`` the refresh token (and so the access
        token issued with it) as well."""
        values = {"access_revoked": True, **({"refresh_revoked": True} if refresh else {})}
        self.session.execute(update(OAuthToken).where(OAuthToken.id == token_id).values(values))

    def revoke_grant(self, grant_id: int) -> None:
        self.session.execute(
            update(OAuthToken)
            .where(
                OAuthToken.grant_id == grant_id,
                or_(OAuthToken.access_revoked.is_(False), OAuthToken.refresh_revoked.is_(False)),
            )
            .values(access_revoked=True, refresh_revoked=True)
        )
