"""Access checks of the OAuth endpoints (the generated access tests know both kinds).

The token and revocation endpoints authenticate the *client* (HTTP Basic or the form), not an
``Authorization`` credential of the API: :class:`ClientCredentials` is a :class:`NoCredentials`
check. ``/me`` answers only OAuth callers holding the ``profile`` scope; a team or device token
is authenticated (a bad one stays 401) and then refused with 403, as the reference does.
"""

from __future__ import annotations

from fastapi import Request

from admit.devices.access import NoCredentials
from admit.kit.http.context import Authenticated, Principal, Session, authenticate
from admit.kit.http.errors import forbidden


class ClientCredentials(NoCredentials):
    """The OAuth client authenticates itself in the request (Basic or form parameters)."""


class ProfileAccess(Authenticated):
    # Not a team permission: a marker that only OAuth callers with the scope pass.
    permission = "profile"

    async def __call__(self, request: Request, session: Session) -> Principal:
        principal = await authenticate(request, session)
        if principal.kind != "oauth" or "profile" not in (principal.scopes or ()):
            raise forbidden()
        return principal
