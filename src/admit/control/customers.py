"""The organizer's customers: the list (searched by e-mail, name or identifier, 50 a page),
a customer's page with their orders and memberships, and a form changing their name, e-mail
and whether the account is active.

The list reads its own statement: the API filters customers by exact e-mail or identifier
only, and a back office is searched with part of a name. The page shows the customer as the
API's retrieve answers it, and the form runs the API's update handler (``PATCH``), so its
checks (an e-mail another customer has, a bad address) are the ones shown by the fields and
its ``service.customer.changed`` notification is recorded."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter
from sqlalchemy import func, or_, select
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.api_call import Errors, run, with_body
from admit.control.editing import found, listed, no_such, resource
from admit.control.fields import Field, to_body, typed, whole_number
from admit.control.history import organizer_history
from admit.control.nav import ORDERS_READ, organizer_nav
from admit.control.render import render, text_of
from admit.customers import routes as customer_routes
from admit.kit.http.context import OrganizerAccess, OrgContext
from admit.models import Customer, Event, MembershipType, Order
from admit.web.forms import Pairs
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
PATH = "/control/organizer/{organizer}/customers"
READ, WRITE = customer_routes.READ, customer_routes.WRITE
CUSTOMERS = customer_routes.customers
PAGE_SIZE = 50
MAX_SEARCH = 190
ORDERS_SHOWN = 100

FIELDS = [
    Field("name", "Name"),
    Field("email", "E-mail address"),
    Field("is_active", "Active (may sign in and buy as this customer)", "bool"),
]


def base(ctx: OrgContext) -> str:
    return f"/control/organizer/{ctx.organizer_slug}/customers/"


def _asked(page: Page) -> tuple[dict[str, str], Errors, int]:
    params = page.request.query_params
    asked = {"search": params.get("search", "").strip(), "page": params.get("page", "")}
    errors: Errors = {}
    if len(asked["search"]) > MAX_SEARCH:
        errors["search"] = [f"Search for at most {MAX_SEARCH} characters."]
    number = 1 if asked["page"] == "" else whole_number(asked["page"], 100_000)
    if not number:
        errors["page"] = ["There is no such page."]
    return asked, errors, number or 1


async def customer_rows(
    ctx: OrgContext, search: str, number: int
) -> tuple[int, list[dict[str, Any]]]:
    """The organizer's customers matching ``search`` (part of the e-mail address or name, the
    identifier or external identifier as a whole), newest first: the count and a page."""
    query = select(
        Customer.identifier,
        Customer.name_cached,
        Customer.email,
        Customer.is_active,
        Customer.is_verified,
        Customer.date_joined,
    ).where(Customer.organizer_id == ctx.organizer_id)
    if search:
        query = query.where(
            or_(
                Customer.email.icontains(search, autoescape=True),
                Customer.name_cached.icontains(search, autoescape=True),
                Customer.identifier.in_({search, search.upper()}),
                Customer.external_identifier == search,
            )
        )
    count = await ctx.session.scalar(select(func.count()).select_from(query.subquery()))
    rows = await ctx.session.execute(
        query.order_by(Customer.date_joined.desc(), Customer.id.desc())
        .limit(PAGE_SIZE)
        .offset((number - 1) * PAGE_SIZE)
    )
    return int(count or 0), [row._asdict() for row in rows]


@router.get(PATH + "/")
@control_page(OrganizerAccess(READ))
async def customers(page: Page, ctx: OrgContext) -> Response:
    asked, errors, number = _asked(page)
    nav = await organizer_nav(page, ctx, "customers")
    if errors:
        return render(page, "customers.html", 400, nav=nav, rows=[], count=0, asked=asked,
                      errors=errors, links={}, base=base(ctx))  # fmt: skip
    count, rows = await customer_rows(ctx, asked["search"], number)
    keep = {"search": asked["search"]} if asked["search"] else {}
    links = {}
    if number > 1:
        links["previous"] = "?" + urlencode({**keep, "page": number - 1})
    if number * PAGE_SIZE < count:
        links["next"] = "?" + urlencode({**keep, "page": number + 1})
    return render(page, "customers.html", nav=nav, rows=rows, count=count, asked=asked,
                  errors={}, links=links, base=base(ctx))  # fmt: skip


async def _orders(ctx: OrgContext, identifier: str) -> list[dict[str, Any]]:
    """The customer's orders in the events whose orders this user may read, newest first."""
    rows = await ctx.session.execute(
        select(Order.code, Order.status, Order.datetime, Order.total, Order.testmode,
               Event.id, Event.slug, Event.name, Event.currency)
        .join(Event, Event.id == Order.event_id)
        .join(Customer, Customer.id == Order.customer_id)
        .where(Customer.organizer_id == ctx.organizer_id, Customer.identifier == identifier,
               Event.organizer_id == ctx.organizer_id)
        .order_by(Order.datetime.desc(), Order.id.desc())
        .limit(ORDERS_SHOWN)
    )  # fmt: skip
    return [
        {"code": code, "status": status, "datetime": when, "total": total, "testmode": test,
         "event": slug, "event_name": text_of(name), "currency": currency}
        for code, status, when, total, test, eid, slug, name, currency in rows
        if ctx.has_event_permission(eid, ORDERS_READ)
    ]  # fmt: skip


async def _memberships(ctx: OrgContext, identifier: str) -> list[dict[str, Any]]:
    body = await listed(ctx, resource("memberships"), urlencode({"customer": identifier}))
    types = dict(
        (await ctx.session.execute(
            select(MembershipType.id, MembershipType.name)
            .where(MembershipType.organizer_id == ctx.organizer_id)
        )).all()
    )  # fmt: skip
    return [{**m, "type_name": text_of(types.get(m["membership_type"]))} for m in body["results"]]


def _form(customer: dict[str, Any]) -> dict[str, Any]:
    return {"name": customer.get("name") or "", "email": customer.get("email") or "",
            "is_active": bool(customer.get("is_active"))}  # fmt: skip


async def _page(page: Page, ctx: OrgContext, identifier: str, values: dict[str, Any] | None = None,
                errors: Errors | None = None, status: int = 200) -> Response:  # fmt: skip
    shown = await found(ctx, CUSTOMERS, identifier)
    if shown is None:
        return no_such(page, "customer")
    return render(page, "customer.html", status, nav=await organizer_nav(page, ctx, "customers"),
                  customer=shown, orders=await _orders(ctx, identifier),
                  memberships=await _memberships(ctx, identifier), base=base(ctx),
                  fields=FIELDS, values=values or _form(shown), errors=errors or {},
                  history=await organizer_history(ctx, "customer", identifier),
                  may_write=ctx.has_organizer_permission(WRITE))  # fmt: skip


@router.get(PATH + "/{customer}/")
@control_page(OrganizerAccess(READ))
async def customer_page(page: Page, ctx: OrgContext, customer: str) -> Response:
    return await _page(page, ctx, customer)


def _body(pairs: Pairs, customer: dict[str, Any]) -> dict[str, Any]:
    """The PATCH body: the name's parts only when the name was changed (a name kept as given
    and family name stays so)."""
    body = to_body(FIELDS, pairs)
    name = body.pop("name") or ""
    if name != (customer.get("name") or ""):
        parts = customer.get("name_parts") or {}
        scheme = {"_scheme": parts["_scheme"]} if "_scheme" in parts else {}
        body["name_parts"] = {**scheme, "full_name": name} if name else {}
    return body


@router.post(PATH + "/{customer}/")
@control_page(OrganizerAccess(WRITE), form=True)
async def customer_update(page: Page, ctx: OrgContext, pairs: Pairs, customer: str) -> Response:
    identifier = customer
    shown = await found(ctx, CUSTOMERS, identifier)
    if shown is None:
        return no_such(page, "customer")
    body = _body(pairs, shown)

    async def work() -> Any:
        req = with_body(ctx, body, "PATCH")
        await CUSTOMERS.prepare(req, {"id": identifier})
        return await CUSTOMERS.handle_update(req, identifier, partial=True)

    _, errors = await run(page, ctx, work)
    if errors:
        if "name_parts" in errors:
            errors["name"] = errors.pop("name_parts")
        return await _page(page, ctx, identifier, typed(FIELDS, pairs), errors, 400)
    page.web.flash("The customer was saved.")
    return page.redirect(f"{base(ctx)}{identifier}/")
