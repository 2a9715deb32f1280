"""Generated over every back-office page and action: a user whose teams lack the permission
the page's access object asks for gets 403 (an HTML page, not a traceback or JSON), one
holding just that permission gets the page (200) or the action done (303); another
organizer's administrator and anonymous visitors are refused too. The permission is read from
the route's own access object, so a new page is covered the day it is added."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import pytest
from fastapi.routing import APIRoute

from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
from admit.control.routes import CONTROL_ROUTERS
from admit.kit.http.context import AnyEventPermission, EventAccess, OrganizerAccess, implied
from tests.control import scheduled_setup
from tests.control.conftest import PASSWORD_HASH, E, Shop, _post, sign_in
from tests.control.scheduled_setup import product_child
from tests.factories import Factory
from tests.oauth.helpers import csrf

ROUTES = [
    (method, route)
    for router in CONTROL_ROUTERS
    for route in router.routes
    if isinstance(route, APIRoute) and hasattr(route.endpoint, "control_access")
    for method in sorted(route.methods)
]
IDS = [f"{method} {route.path}" for method, route in ROUTES]
JOBS = [(m, r) for m, r in ROUTES if "/{identifier}/{id1}/{id2}/" in r.path]
JOB_IDS = [f"{method} {route.path}" for method, route in JOBS]
PLAIN = [(m, r) for m, r in ROUTES if (m, r) not in JOBS]
PLAIN_IDS = [f"{method} {route.path}" for method, route in PLAIN]
# The access object of each level's export action (the exporter's permission).
EXPORT_ACCESS = {
    (
        "event" if route.path.startswith("/control/event/") else "organizer"
    ): route.endpoint.control_access
    for _, route in ROUTES
    if route.path.endswith("/exports/{identifier}/run")
}


# The exporter each export action of a level runs (its permission is the one needed).
EXPORTERS = {"event": ("orderlist", {"_format": "xlsx"}),
             "organizer": ("giftcardlist", {"_format": "csv"})}  # fmt: skip


def needed(access: object) -> tuple[str, list[str]]:
    """The level (``event`` or ``organizer``) and the permissions of which one is needed
    (none: any team covering the event, or any team of the organizer)."""
    level = getattr(access, "exporter_level", None)
    if level is not None:  # the permission of the exporter the URL names
        from admit.exports.lookup import find

        exporter = find(level, EXPORTERS[level][0])
        assert exporter is not None
        permission = exporter.permission
        return ("organizer" if permission.startswith("organizer.") else "event"), [permission]
    if isinstance(access, AnyEventPermission):
        return "event", list(access.permissions)
    if isinstance(access, EventAccess):
        if access.event_permission:
            return "event", [access.event_permission]
        if access.organizer_permission:
            return "organizer", [access.organizer_permission]
        return "event", []
    assert isinstance(access, OrganizerAccess)
    return "organizer", [access.permission] if access.permission else []


def _without(all_perms: tuple[str, ...], wanted: list[str]) -> list[str]:
    return [p for p in all_perms if not any(implied(frozenset([p]), w) for w in wanted)]


async def _prepare(api, factory: Factory, route: APIRoute, shop: Shop) -> None:
    """The order an action needs to succeed: one waiting for approval, a canceled one."""
    if route.path.endswith(("/approve", "/deny")):
        body = {"email": "wait@example.org", "require_approval": True,
                "positions": [{"item": shop.item, "attendee_name": "Wai Ting"}]}  # fmt: skip
        shop.orders.append(await _post(api, shop.token, f"{E}/orders/", body))
    if route.path.endswith("/reactivate"):
        code = shop.orders[2]["code"]
        headers = {"Authorization": f"Token {shop.token}"}
        canceled = await api.post(f"{E}/orders/{code}/mark_canceled/", headers=headers)
        assert canceled.status_code == 200, canceled.text
        shop.orders.append(shop.orders[2])
    if route.path.endswith("/positions/{position}/cancel"):  # not the order's last ticket
        code = shop.orders[2]["code"]
        body = {"create_positions": [{"item": shop.item, "attendee_name": "Sec Ond"}]}
        added = await api.post(f"{E}/orders/{code}/change/", json=body,
                               headers={"Authorization": f"Token {shop.token}"})  # fmt: skip
        assert added.status_code == 200, added.text
        shop.made = {"position": str(shop.orders[2]["positions"][0]["id"])}
    if "/refunds/{local_id}/" in route.path:
        code = shop.orders[0]["code"]
        headers = {"Authorization": f"Token {shop.token}"}
        made = await api.post(f"{E}/orders/{code}/payments/1/refund/", json={"amount": "1.00"},
                              headers=headers)  # fmt: skip
        assert made.status_code == 200, made.text
        shop.made = {"local_id": str(made.json()["local_id"])}
    if route.path.startswith("/control/organizer/{organizer}/devices/{id}"):
        made = await _post(api, shop.token, "/api/v1/organizers/acme/devices/",
                           {"name": "Door", "all_events": True})  # fmt: skip
        shop.made = {"id": str(made["device_id"])}
    if route.path.startswith("/control/organizer/{organizer}/webhooks/{id}"):
        made = await _post(api, shop.token, "/api/v1/organizers/acme/webhooks/", HOOK)
        shop.made = {"id": str(made["id"]), "call": str(await _failed_call(factory, made["id"]))}
    if route.path.startswith("/control/organizer/{organizer}/teams/{id}"):
        shop.made = await _team(api, factory, shop)
    if route.path.startswith("/control/organizer/{organizer}/giftcards/{id}"):
        made = await _post(api, shop.token, "/api/v1/organizers/acme/giftcards/",
                           {"value": "20.00", "currency": "EUR"})  # fmt: skip
        shop.made = {"id": str(made["id"])}
    if route.path.startswith("/control/organizer/{organizer}/customers/{customer}"):
        kim = {"email": "kim@example.org", "name_parts": {"full_name": "Kim"}}
        made = await _post(api, shop.token, "/api/v1/organizers/acme/customers/", kim)
        shop.made = {"customer": made["identifier"]}
    area = _area(route.path)
    if area in OBJECTS:
        api_path, body = OBJECTS[area]
        made = await _post(api, shop.token, f"{E}/{api_path}/", body)
        shop.made = {"id": str(made["id"])}
        child = (made.get("variations") or made.get("options") or [None])[0]
        if child:
            shop.made["cid"] = str(child["id"])
        if area == "products" and ("/addons/" in route.path or "/bundles/" in route.path):
            shop.made.update(await product_child(api, shop, route.path, made["id"]))
    elif area in ("quotas", "checkinlists"):
        shop.made = {"id": str(shop.quota if area == "quotas" else shop.checkin_list)}


HOOK = {"target_url": "https://93.184.216.34/hook", "action_types": ["service.event.order.placed"]}


async def _failed_call(factory: Factory, webhook_id: int) -> int:
    """A call of the delivery log that failed (so it may be sent again)."""
    from admit.models import WebhookCall

    async with factory.sessionmaker() as session:
        call = WebhookCall(webhook_id=webhook_id, source="notification", source_id=1,
                           action="service.event.order.placed", payload={}, status="failed",
                           attempts=3)  # fmt: skip
        session.add(call)
        await session.commit()
        return call.id


async def _team(api, factory: Factory, shop: Shop) -> dict[str, str]:
    """A team with a member, an invite and an API token, through the API."""
    teams = "/api/v1/organizers/acme/teams"
    team = await _post(api, shop.token, f"{teams}/", {"name": "Crew"})
    member = await factory.user("crew@example.org", password_hash=PASSWORD_HASH)
    await _post(api, shop.token, f"{teams}/{team['id']}/invites/", {"email": member.email})
    invite = await _post(api, shop.token, f"{teams}/{team['id']}/invites/",
                         {"email": "new@example.org"})  # fmt: skip
    token = await _post(api, shop.token, f"{teams}/{team['id']}/tokens/", {"name": "old"})
    return {"id": str(team["id"]), "member": str(member.id), "invite": str(invite["id"]),
            "token": str(token["id"])}  # fmt: skip


# Objects a catalog page of that area edits, made through the API first (children included).
OBJECTS = {
    "products": ("items", {"name": {"en": "Sizes"}, "default_price": "5.00",
                           "variations": [{"value": {"en": "S"}}, {"value": {"en": "L"}}]}),
    "categories": ("categories", {"name": {"en": "Main"}}),
    "taxrules": ("taxrules", {"name": {"en": "VAT"}, "rate": "19.00"}),
    "questions": ("questions", {"question": {"en": "Meal?"}, "type": "C", "identifier": "MEAL",
                                "options": [{"identifier": "V", "answer": {"en": "Vegan"}}]}),
    "vouchers": ("vouchers", {"code": "PERMCHECK1"}),
    "discounts": ("discounts", {"internal_name": "Group", "condition_min_count": 3}),
}  # fmt: skip
# A form each action succeeds with (keyed by the path's end).
FORMS = {
    "/events/new": {"name": "Gala", "slug": "gala", "date_from": "2031-05-01T19:00",
                    "timezone": "UTC", "currency": "EUR"},
    "/settings/": {"name": "Summit", "date_from": "2030-06-01T09:00", "timezone": "UTC",
                   "currency": "EUR", "ticket_secret_generator": "random"},
    "/live/": {"action": "test_on"},
    "/refund": {"payment": "1", "amount": "2.00"},
    "/vouchers/batch": {"count": "2", "max_usages": "1", "price_mode": "none"},
    "/products/new": {"name": "New", "default_price": "1.00"},
    "/products/{id}/": {"name": "Sizes", "default_price": "6.00"},
    "/variations/new": {"value": "M"},
    "/variations/{cid}/": {"value": "Small"},
    "/quotas/new": {"name": "Q", "size": "5"},
    "/quotas/{id}/": {"name": "Hall", "size": "200"},
    "/categories/new": {"name": "C"},
    "/categories/{id}/": {"name": "C2"},
    "/taxrules/new": {"name": "Reduced", "rate": "7.00"},
    "/taxrules/{id}/": {"name": "VAT", "rate": "20.00"},
    "/questions/new": {"question": "Why?", "type": "S", "identifier": "WHY"},
    "/questions/{id}/": {"question": "Meal??", "type": "C", "identifier": "MEAL"},
    "/options/new": {"answer": "Fish", "identifier": "F"},
    "/addons/new": {"addon_category": "{category}", "min_count": "0", "max_count": "2",
                    "position": "0"},
    "/addons/{cid}/": {"addon_category": "{category}", "min_count": "1", "max_count": "1",
                       "position": "1"},
    "/bundles/new": {"bundled_item": "{bundled}", "count": "2", "designated_price": "1.00"},
    "/bundles/{cid}/": {"bundled_item": "{bundled}", "count": "3", "designated_price": "0.00"},
    "/discounts/new": {"internal_name": "Three", "active": "1", "position": "0",
                       "condition_all_products": "1", "condition_min_count": "3",
                       "condition_min_value": "0", "benefit_discount_matching_percent": "10",
                       "benefit_same_products": "1"},
    "/discounts/{id}/": {"internal_name": "Group", "active": "1", "position": "1",
                         "condition_all_products": "1", "condition_min_count": "4",
                         "condition_min_value": "0", "benefit_discount_matching_percent": "5",
                         "benefit_same_products": "1"},
    "/options/{cid}/": {"answer": "Vegan!", "identifier": "V"},
    "/checkinlists/new": {"name": "Side door", "all_products": "1"},
    "/checkinlists/{id}/": {"name": "Main door", "all_products": "1"},
    "/vouchers/new": {"max_usages": "1", "price_mode": "none"},
    "/vouchers/{id}/": {"code": "PERMCHECK1", "max_usages": "3", "price_mode": "none"},
    "/devices/new": {"name": "Door", "all_events": "1", "security_profile": "pretixscan"},
    "/teams/new": {"name": "Crew 2", "all_events": "1"},
    "/teams/{id}/": {"name": "Crew", "limit_event_permissions": "event.orders:read"},
    "/invites/new": {"email": "another@example.org"},
    "/tokens/new": {"name": "scanner"},
    "/giftcards/new": {"value": "10.00", "currency": "EUR"},
    "/transact": {"value": "-5.00", "text": "Coffee"},
    "/giftcards/{id}/edit": {"expires": "2040-01-01T00:00", "conditions": "Weekdays only"},
    "/customers/{customer}/": {"name": "Kim Lee", "email": "kim@example.org", "is_active": "1"},
    "/webhooks/new": {"target_url": HOOK["target_url"], "all_events": "1",
                      "action_types": HOOK["action_types"][0]},
    "/webhooks/{id}/": {"target_url": HOOK["target_url"], "all_events": "1", "enabled": "1",
                        "action_types": "service.event.order.paid"},
}  # fmt: skip
JOB = "/{identifier}/{id1}/{id2}/"
# Actions answering the new object's page at once (200): a secret shown this once.
SHOWN_ONCE = ("/webhooks/new", "/tokens/new")


def _level(path: str) -> str:
    return "event" if path.startswith("/control/event/") else "organizer"


async def _start_export(web, factory, email: str, route: APIRoute, shop: Shop, background) -> None:
    """Runs the level's exporter as ``email`` through the back office (the job is theirs) and
    keeps the job's opaque values for the progress, status and download pages."""
    level = _level(route.path)
    identifier, form = EXPORTERS[level]
    base = "/control/event/acme/summit" if level == "event" else "/control/organizer/acme"
    await sign_in(web, factory, email)
    token = csrf((await web.get("/logout")).text)
    started = await web.post(f"{base}/exports/{identifier}/run", data={"csrf_token": token, **form})
    assert started.status_code == 303, started.text[:1500]
    id1, id2 = started.headers["location"].rstrip("/").rsplit("/", 2)[-2:]
    shop.made = {"id1": id1, "id2": id2}
    from tests.control.test_organizer_pages import _finished  # (the download finds the file)

    status = await _finished(web, started.headers["location"], background)
    assert status["status"] == "finished", status


def _area(path: str) -> str:
    """The catalog area of a back-office path (``products``, ``vouchers``, …)."""
    rest = path.split("/control/event/{organizer}/{event}/", 1)
    return rest[1].split("/", 1)[0] if len(rest) == 2 else ""


PLACEHOLDERS = {
    "id": "1",
    "cid": "1",
    "local_id": "1",
    "id1": "x",
    "id2": "y",
    "call": "1",
    "member": "1",
    "invite": "1",
    "token": "1",
    "customer": "NOSUCH",
}


def _url_and_form(route: APIRoute, shop: Shop) -> tuple[str, dict[str, str]]:
    orders = {"mark_paid": 1, "extend": 1, "cancel": 2, "resend": 0, "regenerate_secrets": 0,
              "approve": -1, "deny": -1, "reactivate": -1}  # fmt: skip
    code = shop.orders[0]["code"]
    form: dict[str, str] = {}
    for action, index in orders.items():
        if route.path.endswith("/" + action) and "/refunds/" not in route.path:
            code = shop.orders[index]["code"]
    if route.path.endswith("/extend"):
        form["expires"] = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    if route.path.endswith("/positions/{position}/change"):
        form.update(product=str(shop.item), price="20.00", attendee_name="Ada King")
    if route.path.endswith("/positions/new"):
        form.update(product=str(shop.item), attendee_name="Ada Queen")
    if route.path.endswith("/checkin/redeem"):
        form.update(secret=shop.orders[0]["positions"][0]["secret"], list=str(shop.checkin_list))
    for end, values in FORMS.items():
        if route.path.endswith(end):
            form.update(values)
    form = {k: v.format_map(defaultdict(str, shop.made)) for k, v in form.items()}
    if scheduled_setup.SCHEDULED in route.path:
        form.update(scheduled_setup.form(_level(route.path)))
    identifier, export_form = EXPORTERS[_level(route.path)]
    if route.path.endswith("/exports/{identifier}/run"):
        form.update(export_form)
    position = str(shop.orders[0]["positions"][0]["id"])  # a ticket of the paid order
    url = route.path.format(organizer="acme", event="summit", code=code, identifier=identifier,
                            **{**PLACEHOLDERS, "position": position, **shop.made})  # fmt: skip
    return url, form


async def _user(factory: Factory, name: str, org_slug: str, **team: object) -> str:
    from sqlalchemy import select

    from admit.models import Organizer

    async with factory.sessionmaker() as session:
        org = (await session.scalars(select(Organizer).where(Organizer.slug == org_slug))).one()
    user = await factory.user(f"{name}@example.org", password_hash=PASSWORD_HASH)
    await factory.team(org, members=[user], **team)  # type: ignore[arg-type]
    return user.email


async def _visit(web, factory, email: str, method: str, url: str, form: dict[str, str]):
    await sign_in(web, factory, email)
    if method == "GET":
        return await web.get(url)
    token = csrf((await web.get("/logout")).text)  # a page with a form for anyone
    return await web.post(url, data={"csrf_token": token, **form})


def _refused(response) -> None:
    assert response.status_code == 403, response.text[:500]
    assert response.headers["content-type"].startswith("text/html")
    assert "Not allowed" in response.text and "Traceback" not in response.text


@pytest.mark.parametrize(("method", "route"), PLAIN, ids=PLAIN_IDS)
async def test_lacking_the_permission_is_403_having_it_works(
    web, api, factory, shop, method, route
):
    await _lacking_and_having(web, api, factory, shop, method, route, None)


@pytest.mark.parametrize(("method", "route"), JOBS, ids=JOB_IDS)
async def test_an_export_jobs_pages_are_its_owners(
    web, api, factory, shop, method, route, background
):
    """The progress, status and download pages of a job the user started (the job engine
    runs here, so the download finds the file)."""
    await _lacking_and_having(web, api, factory, shop, method, route, background)


async def _lacking_and_having(web, api, factory, shop, method, route, background) -> None:
    level, wanted = needed(route.endpoint.control_access)
    await _prepare(api, factory, route, shop)
    having = {
        "event_permissions": wanted[:1] if level == "event" else [],
        "organizer_permissions": wanted[:1] if level == "organizer" else [],
    }
    having_email = ""
    if JOB in route.path:  # the job is the user's own: they must have been able to start it
        permission = needed(EXPORT_ACCESS[_level(route.path)])[1][0]
        key = (
            "organizer_permissions" if permission.startswith("organizer.") else "event_permissions"
        )
        having[key] = [permission]
        having_email = await _user(factory, "having", "acme", **having)
        await _start_export(web, factory, having_email, route, shop, background)
    lacking: dict | None = None
    if scheduled_setup.SCHEDULED in route.path:  # owned by whoever scheduled it
        level = _level(route.path)
        having = scheduled_setup.having(level)
        having_email = await _user(factory, "having", "acme", **having)
        shop.made = await scheduled_setup.setup(
            web, level, route.path, lambda e: sign_in(web, factory, e), having_email
        )
        if level == "organizer" and "{id}" not in route.path:  # any permission at all
            lacking = {"event_permissions": [], "organizer_permissions": []}
    url, form = _url_and_form(route, shop)
    if lacking is None and wanted:
        lacking = {
            "event_permissions": _without(EVENT_PERMISSIONS, wanted if level == "event" else []),
            "organizer_permissions": _without(
                ORGANIZER_PERMISSIONS, wanted if level == "organizer" else []
            ),
        }
    elif lacking is None:  # no permission asked: a team of the organizer not covering the event
        from sqlalchemy import select

        from admit.models import Event

        async with factory.sessionmaker() as session:
            other = (await session.scalars(select(Event).where(Event.slug == "expo"))).one()
        lacking = {"all_events": False, "events": [other]} if level == "event" else None
    if lacking is not None:
        email = await _user(factory, "lacking", "acme", **lacking)
        _refused(await _visit(web, factory, email, method, url, form))
    email = having_email or await _user(factory, "having", "acme", **having)
    response = await _visit(web, factory, email, method, url, form)
    done = 200 if method == "GET" or route.path.endswith(SHOWN_ONCE) else 303
    assert response.status_code == done, response.text[response.text.find("<main") :][:1500]
    outsider = await _user(
        factory,
        "outsider",
        "rival",
        event_permissions=list(EVENT_PERMISSIONS),
        organizer_permissions=list(ORGANIZER_PERMISSIONS),
    )
    _refused(await _visit(web, factory, outsider, method, url, form))


@pytest.mark.parametrize(("method", "route"), ROUTES, ids=IDS)
async def test_every_page_needs_a_login_and_every_form_its_csrf_token(
    web, factory, people, shop, method, route
):
    url, form = _url_and_form(route, shop)
    anonymous = await web.request(method, url, data=form if method == "POST" else None)
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/login?next=")
    if method == "POST":
        await sign_in(web, factory, people["boss"])
        forged = await web.post(url, data={"csrf_token": "forged", **form})
        assert forged.status_code == 403 and "CSRF" in forged.text


def test_every_control_route_is_covered():
    covered = {route.path for _, route in ROUTES}
    pages = {
        route.path
        for router in CONTROL_ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute) and "/static/" not in route.path
    }
    assert pages - covered == {"/control/"}  # the organizer list: any signed-in user
    assert len(covered) >= 40
