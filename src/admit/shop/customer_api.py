"""The buyer's customer account in the headless checkout, under
``/api/v1/public/organizers/{organizer}/customer/``: log in with e-mail address and password
for a token (``customers/sign_in.py``, the login the shop's pages keep in their session), and
read the account's memberships. The checkout takes the same token as
``Authorization: Customer <token>``: the order is the customer's, and its positions may name
``used_membership``.

Only where the organizer has customer accounts switched on (``customer_accounts`` and
``customer_accounts_native``); elsewhere these routes are 404, and a checkout that sends a
token is refused with 401 like one whose token has expired.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from pydantic import Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from admit.customers import account, sign_in
from admit.kit.http.body import read_object
from admit.kit.http.context import Session
from admit.kit.http.errors import APIError, FieldErrors, not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import API_PREFIX
from admit.kit.openapi.bodies import json_body
from admit.kit.resources.crud import validate_input
from admit.kit.resources.schema import WriteModel
from admit.models import Customer, Organizer
from admit.organizers.settings import accounts_open
from admit.shop.limits import PublicAccess

C = "/public/organizers/{organizer}/customer"
SCHEME = "customer"
WRONG = "The e-mail address or the password is wrong, or the account is not active yet."
EXPIRED = "Your login has expired or is not valid: please log in again."

router = APIRouter(
    prefix=API_PREFIX, tags=["public checkout"], dependencies=[Depends(PublicAccess())]
)


class LoginIn(WriteModel):
    email: Annotated[str, Field(max_length=254)]
    password: Annotated[str, Field(max_length=1024)]


async def accounts_organizer(session: AsyncSession, slug: str) -> Organizer:
    """The organizer whose buyers may log in here (404 otherwise)."""
    organizer = await session.scalar(select(Organizer).where(Organizer.slug == slug))
    if organizer is None or not accounts_open(organizer):
        raise not_found()
    return organizer


def presented_token(request: Request) -> str | None:
    """The token of ``Authorization: Customer <token>``, or None without that header."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != SCHEME or not token.strip():
        raise APIError(401, "Send the login as 'Authorization: Customer <token>'.")
    return token.strip()


async def logged_in(request: Request, session: AsyncSession, organizer_id: int) -> Customer | None:
    """The customer whose token the request presents (None without one; 401 when it is not
    valid for this organizer, or their accounts are switched off)."""
    token = presented_token(request)
    if token is None:
        return None
    organizer = await session.get(Organizer, organizer_id)
    secret = request.app.state.secret_key
    customer = (
        await sign_in.customer_for_token(session, secret, organizer_id, token)
        if organizer is not None and accounts_open(organizer)
        else None
    )
    if customer is None:
        raise APIError(401, EXPIRED)
    return customer


def _customer(customer: Customer) -> dict[str, object]:
    return {
        "identifier": customer.identifier,
        "email": customer.email,
        "name": customer.name_cached or None,
        "locale": customer.locale,
    }


@router.post(
    f"{C}/login/",
    name="public-customer-login",
    summary="Log in to a customer account",
    openapi_extra=json_body(LoginIn),
)
async def login(organizer: str, request: Request, session: Session) -> Response:
    """Checks the e-mail address and password of a customer account of the organizer and
    answers a token valid for 30 days (or until the password changes), to send as
    `Authorization: Customer <token>` to `customer/` and to `checkout/`. 400 when the address
    or the password is wrong (which of them is not told)."""
    found = await accounts_organizer(session, organizer)
    data: LoginIn = validate_input(LoginIn, await read_object(request))  # type: ignore[assignment]
    customer = await sign_in.authenticate(session, found.id, data.email, data.password)
    if customer is None:
        raise FieldErrors.general(WRONG)
    token = sign_in.token_for(request.app.state.secret_key, customer)
    body = {
        "token": token,
        "expires_in": sign_in.TOKEN_DAYS * 86400,
        "customer": _customer(customer),
    }
    return JSONResponse(body)


@router.get(f"{C}/", name="public-customer", summary="The logged-in customer and memberships")
async def me(organizer: str, request: Request, session: Session) -> Response:
    """The customer of the token (`Authorization: Customer <token>`, 401 without a valid one)
    with their memberships: type, validity, uses so far, and whether it is valid now. A
    membership's `id` is what a checkout position names as `used_membership`."""
    found = await accounts_organizer(session, organizer)
    customer = await logged_in(request, session, found.id)
    if customer is None:
        raise APIError(401, EXPIRED)
    body = _customer(customer)
    body["memberships"] = await account.memberships_of(session, customer)
    return JSONResponse(body)
