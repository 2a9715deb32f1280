"""One object behind every detail route, and a way to change it.

Keyed by the route template below ``/api/v1/organizers/{organizer}``. A recipe makes the
object (through the API where that is simple, else straight in the database) and returns its
URL; ``patch`` is a body that changes it through PATCH, ``change`` a direct change for routes
that cannot be written. ``test_etags_generated`` fails for a detail route without a recipe.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from sqlalchemy import select, text, update

from admit.auth.credentials import generate_token, hash_token
from admit.models import Checkin, Event, Job, ScheduledExport, Seat, SubEvent, TeamAPIToken
from tests.factories import Factory, World, auth
from tests.seating.helpers import layout, seated_event

O = "/api/v1/organizers/acme"  # noqa: E741
E = f"{O}/events/summit"


@dataclass
class Env:
    client: httpx.AsyncClient
    world: World
    factory: Factory
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def h(self) -> dict[str, str]:
        return auth(self.world.admin)

    async def post(self, url: str, body: dict[str, Any], status: int = 201) -> dict[str, Any]:
        response = await self.client.post(url, json=body, headers=self.h)
        assert response.status_code == status, (url, response.text)
        return response.json()

    async def sql(self, statement: Any, **params: Any) -> None:
        async with self.factory.sessionmaker() as session:
            await session.execute(statement, params)
            await session.commit()

    async def plugins(self) -> None:
        async with self.factory.sessionmaker() as session:
            event = await session.get(Event, self.world.event.id)
            assert event is not None
            event.plugins = ["autocheckin", "sendmail"]
            await session.commit()

    async def item(self, price: str = "10.00", quota: int = 100) -> int:
        body = await self.post(f"{E}/items/", {"name": {"en": "Ticket"}, "default_price": price})
        await self.post(f"{E}/quotas/", {"name": "Q", "size": quota, "items": [body["id"]]})
        return body["id"]

    async def order(self, positions: int = 1, **kw: Any) -> dict[str, Any]:
        item = await self.item()
        body = {"email": "a@example.org", "positions": [{"item": item}] * positions, **kw}
        return await self.post(f"{E}/orders/", body)

    async def checkin_list(self) -> int:
        body = {"name": "Entry", "all_products": True, "include_pending": True}
        return (await self.post(f"{E}/checkinlists/", body))["id"]


Make = Callable[[Env], Awaitable[str]]
Change = Callable[[Env, str], Awaitable[None]]


@dataclass
class Recipe:
    make: Make
    patch: dict[str, Any] | None = None
    change: Change | None = None
    delete_status: int = 204
    # A fixed representation nothing can change (the sales channels): round trip only.
    static: bool = False
    # A PUT body from the current representation (fields a PUT must not carry left out).
    put: Callable[[dict[str, Any]], dict[str, Any]] = lambda body: body


def _id(url: str) -> int:
    return int(url.rstrip("/").rsplit("/", 1)[1])


def _sql_change(table: str, column: str, value: Any) -> Change:
    async def change(env: Env, url: str) -> None:
        statement = text(f"UPDATE {table} SET {column} = :value WHERE id = :id")
        await env.sql(statement, value=value, id=_id(url))

    return change


async def _checkin(env: Env) -> str:
    order = await env.order()
    clist = await env.checkin_list()
    secret = order["positions"][0]["secret"]
    body = {"secret": secret, "lists": [clist], "force": True, "ignore_unpaid": True}
    response = await env.client.post(f"{O}/checkinrpc/redeem/", json=body, headers=env.h)
    assert response.status_code in (200, 201), response.text
    async with env.factory.sessionmaker() as session:
        checkin_id = await session.scalar(select(Checkin.id).order_by(Checkin.id.desc()))
    return f"{E}/checkins/{checkin_id}/"


async def _list_position(env: Env) -> str:
    order = await env.order()
    clist = await env.checkin_list()
    env.cache["position"] = order["positions"][0]["id"]
    return f"{E}/checkinlists/{clist}/positions/{order['positions'][0]['id']}/"


async def _rename_position(env: Env, url: str) -> None:
    body = {"attendee_name": "Someone Else"}
    position = env.cache["position"]
    response = await env.client.patch(f"{E}/orderpositions/{position}/", json=body, headers=env.h)
    assert response.status_code == 200, response.text


async def _member(env: Env) -> str:
    user = await env.factory.user()
    team = await env.factory.team(env.world.org, members=[user])
    return f"{O}/teams/{team.id}/members/{user.id}/"


async def _team_child(env: Env, kind: str, body: dict[str, Any]) -> str:
    team = await env.post(f"{O}/teams/", {"name": "Crew"})
    created = await env.post(f"{O}/teams/{team['id']}/{kind}/", body)
    return f"{O}/teams/{team['id']}/{kind}/{created['id']}/"


async def _event(env: Env) -> str:
    body = {"name": {"en": "Gala"}, "slug": "gala", "date_from": "2030-01-01T19:00:00Z"}
    await env.post(f"{O}/events/", body)
    return f"{O}/events/gala/"


async def _series(env: Env) -> int:
    body = {
        "name": {"en": "Tour"},
        "slug": "tour",
        "date_from": "2030-01-01T19:00:00Z",
        "has_subevents": True,
    }
    await env.post(f"{O}/events/", body)
    sub = {"name": {"en": "Night"}, "date_from": "2030-02-01T19:00:00Z"}
    return (await env.post(f"{O}/events/tour/subevents/", sub))["id"]


async def _subevent(env: Env) -> str:
    return f"{O}/events/tour/subevents/{await _series(env)}/"


async def _item_child(env: Env, kind: str) -> str:
    item = await env.item()
    if kind == "variations":
        created = {
            "name": {"en": "Shirt"},
            "default_price": "5.00",
            "variations": [{"value": {"en": "Small"}}],
        }
        item = (await env.post(f"{E}/items/", created))["id"]
        body: dict[str, Any] = {"value": {"en": "Medium"}}
    elif kind == "addons":
        category = await env.post(f"{E}/categories/", {"name": {"en": "Extras"}, "is_addon": True})
        body = {"addon_category": category["id"]}
    elif kind == "program_times":
        body = {"start": "2030-05-01T09:00:00Z", "end": "2030-05-01T10:00:00Z"}
    else:
        body = {"bundled_item": await env.item()}
    created = await env.post(f"{E}/items/{item}/{kind}/", body)
    return f"{E}/items/{item}/{kind}/{created['id']}/"


async def _option(env: Env) -> str:
    question = await env.post(
        f"{E}/questions/", {"question": {"en": "Size?"}, "type": "C", "identifier": "size"}
    )
    option = await env.post(
        f"{E}/questions/{question['id']}/options/", {"answer": {"en": "S"}, "identifier": "s"}
    )
    return f"{E}/questions/{question['id']}/options/{option['id']}/"


async def _cart(env: Env) -> str:
    item = await env.item()
    created = await env.post(f"{E}/cartpositions/", {"item": item, "price": "10.00"})
    return f"{E}/cartpositions/{created['id']}/"


async def _order(env: Env) -> str:
    order = await env.order(testmode=True)
    return f"{E}/orders/{order['code']}/"


async def _position(env: Env) -> str:
    order = await env.order(positions=2)
    return f"{E}/orderpositions/{order['positions'][1]['id']}/"


async def _invoice(env: Env) -> str:
    order = await env.order()
    invoice = await env.post(f"{E}/orders/{order['code']}/create_invoice/", {})
    return f"{E}/invoices/{invoice['number']}/"


async def _payment(env: Env) -> str:
    order = await env.order()
    url = f"{E}/orders/{order['code']}/payments/"
    created = await env.post(url, {"amount": "10.00", "provider": "manual"})
    return f"{url}{created['local_id']}/"


async def _refund(env: Env) -> str:
    order = await env.order(status="p", payment_provider="manual")
    url = f"{E}/orders/{order['code']}/refunds/"
    body = {"amount": "1.00", "payment": 1, "provider": "manual", "state": "done"}
    created = await env.post(url, body)
    return f"{url}{created['local_id']}/"


def _order_child_change(table: str, column: str, value: Any) -> Change:
    async def change(env: Env, url: str) -> None:
        code = url.split("/orders/")[1].split("/")[0]
        statement = text(
            f"UPDATE {table} SET {column} = :value WHERE local_id = :local AND order_id = "
            "(SELECT id FROM orders WHERE code = :code)"
        )
        await env.sql(statement, value=value, local=_id(url), code=code)

    return change


async def _seat(env: Env) -> str:
    item = await env.item()
    await seated_event(env.factory, env.world.event, {"Stalls": item, "Balcony": None})
    async with env.factory.sessionmaker() as session:
        seat = await session.scalar(
            select(Seat.id).where(Seat.event_id == env.world.event.id).order_by(Seat.id)
        )
    return f"{E}/seats/{seat}/"


async def _subevent_seat(env: Env) -> str:
    from admit.models import SeatingPlan
    from admit.seating.sync import sync_seats

    sub_id = await _series(env)
    async with env.factory.sessionmaker() as session:
        plan = SeatingPlan(organizer_id=env.world.org.id, name="Hall", layout=layout())
        session.add(plan)
        await session.flush()
        sub = await session.get(SubEvent, sub_id)
        assert sub is not None
        mapping: dict[str, int | None] = {"Stalls": None, "Balcony": None}
        sub.seating_plan = plan.id
        sub.seat_category_mapping = mapping
        await sync_seats(session, sub.event_id, sub_id, plan.id, mapping)
        await session.commit()
        seat = await session.scalar(
            select(Seat.id).where(Seat.subevent_id == sub_id).order_by(Seat.id)
        )
    return f"{O}/events/tour/subevents/{sub_id}/seats/{seat}/"


async def _membership(env: Env) -> str:
    customer = await env.post(f"{O}/customers/", {})
    kind = await env.post(f"{O}/membershiptypes/", {"name": {"en": "Pass"}})
    body = {
        "customer": customer["identifier"],
        "membership_type": kind["id"],
        "date_start": "2030-04-19T00:00:00+02:00",
        "date_end": "2030-04-26T00:00:00+02:00",
    }
    created = await env.post(f"{O}/memberships/", body)
    return f"{O}/memberships/{created['id']}/"


async def _waiting(env: Env) -> str:
    item = await env.item(quota=0)
    created = await env.post(f"{E}/waitinglistentries/", {"email": "w@example.org", "item": item})
    return f"{E}/waitinglistentries/{created['id']}/"


async def _scheduled(env: Env, *, event: bool) -> str:
    from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
    from tests.oauth.helpers import bearer_token, make_app

    user = await env.factory.user()
    await env.factory.team(
        env.world.org,
        members=[user],
        event_permissions=list(EVENT_PERMISSIONS),
        organizer_permissions=list(ORGANIZER_PERMISSIONS),
    )
    application = await make_app(env.factory)
    env.cache["bearer"] = await bearer_token(env.factory, application, user, [env.world.org])
    async with env.factory.sessionmaker() as session:
        row = ScheduledExport(
            organizer_id=env.world.org.id,
            event_id=env.world.event.id if event else None,
            owner_id=user.id,
            export_identifier="orderlist",
            schedule_rrule_time=dt.time(6, 0),
            schedule_rrule="DTSTART:20250101T000000\nRRULE:FREQ=DAILY",
            mail_template="Attached.",
            export_form_data={"_format": "xlsx"},
        )
        session.add(row)
        await session.commit()
        row_id = row.id
    base = E if event else O
    return f"{base}/scheduled_exports/{row_id}/"


async def _job(env: Env) -> str:
    async with env.factory.sessionmaker() as session:
        token_id = await session.scalar(
            select(TeamAPIToken.id).where(TeamAPIToken.token_hash == hash_token(env.world.admin))
        )
        job = Job(
            uuid=generate_token()[:32],
            secret=generate_token(),
            kind="export",
            organizer_id=env.world.org.id,
            owner_kind="token",
            owner_id=token_id,
        )
        session.add(job)
        await session.commit()
        return f"{O}/jobs/{job.uuid}/"


async def _job_change(env: Env, url: str) -> None:
    uuid = url.rstrip("/").rsplit("/", 1)[1]
    await env.sql(update(Job).where(Job.uuid == uuid).values(status="failed"))


def _create(url: str, body: dict[str, Any], *, plugins: bool = False) -> Make:
    async def make(env: Env) -> str:
        if plugins:
            await env.plugins()
        created = await env.post(url, body)
        return f"{url}{created['id']}/"

    return make


async def _organizer(env: Env) -> str:
    return f"{O}/"


async def _rename_organizer(env: Env, url: str) -> None:
    await env.sql(text("UPDATE organizers SET name = 'Acme Renamed' WHERE slug = 'acme'"))


async def _checkins_list(env: Env) -> str:
    return f"{E}/checkinlists/{await env.checkin_list()}/"


async def _device(env: Env) -> str:
    created = await env.post(f"{O}/devices/", {"name": "Scanner"})
    return f"{O}/devices/{created['device_id']}/"


async def _customer(env: Env) -> str:
    created = await env.post(f"{O}/customers/", {})
    return f"{O}/customers/{created['identifier']}/"


async def _sales_channel(env: Env) -> str:
    return f"{O}/saleschannels/box_office/"


RECIPES: dict[str, Recipe] = {
    "/saleschannels/{identifier}/": Recipe(_sales_channel, static=True),
    "/events/{event}/checkinlists/{id}/": Recipe(_checkins_list, {"name": "Exit"}),
    "/events/{event}/checkins/{id}/": Recipe(
        _checkin, change=_sql_change("checkins", "type", "exit")
    ),
    "/events/{event}/auto_checkin_rules/{id}/": Recipe(
        _create(f"{E}/auto_checkin_rules/", {}, plugins=True), {"mode": "paid"}
    ),
    "/events/{event}/checkinlists/{list}/positions/{id}/": Recipe(
        _list_position, change=_rename_position
    ),
    "/": Recipe(_organizer, change=_rename_organizer),
    "/teams/{id}/": Recipe(
        _create(f"{O}/teams/", {"name": "Crew"}),
        {"name": "Staff"},
        # The deprecated can_* flags and the permission lists do not go together in a write.
        put=lambda body: {k: v for k, v in body.items() if not k.startswith("can_")},
    ),
    "/teams/{team}/members/{id}/": Recipe(
        _member, change=_sql_change("users", "email", "renamed@example.org")
    ),
    "/teams/{team}/invites/{id}/": Recipe(
        lambda env: _team_child(env, "invites", {"email": "i@example.org"}),
        change=_sql_change("team_invites", "email", "other@example.org"),
    ),
    "/teams/{team}/tokens/{id}/": Recipe(
        lambda env: _team_child(env, "tokens", {"name": "Scanner"}),
        change=_sql_change("team_api_tokens", "name", "Renamed"),
        delete_status=200,  # a token is deactivated, and shown
    ),
    "/events/{event}/": Recipe(_event, {"name": {"en": "Gala night"}}),
    "/events/{event}/subevents/{id}/": Recipe(_subevent, {"name": {"en": "Matinee"}}),
    "/meta_properties/{id}/": Recipe(
        _create(f"{O}/meta_properties/", {"name": "color"}), {"default": "blue"}
    ),
    "/events/{event}/taxrules/{id}/": Recipe(
        _create(f"{E}/taxrules/", {"name": {"en": "VAT"}, "rate": "19.00"}), {"rate": "7.00"}
    ),
    "/events/{event}/categories/{id}/": Recipe(
        _create(f"{E}/categories/", {"name": {"en": "Tickets"}}), {"name": {"en": "Passes"}}
    ),
    "/events/{event}/items/{id}/": Recipe(
        _create(f"{E}/items/", {"name": {"en": "Ticket"}, "default_price": "5.00"}),
        {"name": {"en": "Pass"}},
    ),
    "/events/{event}/items/{item}/variations/{id}/": Recipe(
        lambda env: _item_child(env, "variations"), {"value": {"en": "Large"}}
    ),
    "/events/{event}/items/{item}/addons/{id}/": Recipe(
        lambda env: _item_child(env, "addons"), {"max_count": 3}
    ),
    "/events/{event}/items/{item}/bundles/{id}/": Recipe(
        lambda env: _item_child(env, "bundles"), {"count": 2}
    ),
    "/events/{event}/items/{item}/program_times/{id}/": Recipe(
        lambda env: _item_child(env, "program_times"), {"end": "2030-05-01T11:00:00Z"}
    ),
    "/events/{event}/questions/{id}/": Recipe(
        _create(
            f"{E}/questions/", {"question": {"en": "Name?"}, "type": "S", "identifier": "name"}
        ),
        {"question": {"en": "Full name?"}},
        put=lambda body: {k: v for k, v in body.items() if k != "options"},
    ),
    "/events/{event}/questions/{question}/options/{id}/": Recipe(_option, {"answer": {"en": "M"}}),
    "/events/{event}/discounts/{id}/": Recipe(
        _create(f"{E}/discounts/", {}), {"internal_name": "Early"}
    ),
    "/events/{event}/quotas/{id}/": Recipe(
        _create(f"{E}/quotas/", {"name": "Hall", "size": 5}), {"size": 6}
    ),
    "/events/{event}/cartpositions/{id}/": Recipe(
        _cart, change=_sql_change("cart_positions", "price", "12.00")
    ),
    "/events/{event}/orders/{code}/": Recipe(_order, {"email": "b@example.org"}),
    "/events/{event}/orderpositions/{id}/": Recipe(_position, {"attendee_name": "Jo"}),
    # An invoice never changes once issued (a change is a cancellation and a new invoice).
    "/events/{event}/invoices/{number}/": Recipe(_invoice, static=True),
    "/events/{event}/orders/{code}/payments/{local_id}/": Recipe(
        _payment, change=_order_child_change("order_payments", "amount", "11.00")
    ),
    "/events/{event}/orders/{code}/refunds/{local_id}/": Recipe(
        _refund, change=_order_child_change("order_refunds", "amount", "2.00")
    ),
    "/seatingplans/{id}/": Recipe(
        _create(f"{O}/seatingplans/", {"name": "Hall", "layout": layout()}), {"name": "Arena"}
    ),
    "/events/{event}/seats/{id}/": Recipe(_seat, {"blocked": True}),
    "/events/{event}/subevents/{subevent_id}/seats/{id}/": Recipe(
        _subevent_seat, {"blocked": True}
    ),
    "/devices/{id}/": Recipe(_device, {"name": "Door"}),
    "/gates/{id}/": Recipe(_create(f"{O}/gates/", {"name": "North"}), {"name": "South"}),
    "/customers/{id}/": Recipe(_customer, {"email": "c@example.org"}),
    "/membershiptypes/{id}/": Recipe(
        _create(f"{O}/membershiptypes/", {"name": {"en": "Pass"}}), {"max_usages": 3}
    ),
    "/memberships/{id}/": Recipe(_membership, {"date_end": "2030-04-27T00:00:00+02:00"}),
    "/webhooks/{id}/": Recipe(
        _create(
            f"{O}/webhooks/",
            {
                "target_url": "https://example.org/hook",
                "action_types": ["service.event.order.paid"],
            },
        ),
        {"target_url": "https://example.org/other"},
    ),
    "/giftcards/{id}/": Recipe(
        _create(f"{O}/giftcards/", {"value": "10.00", "currency": "EUR"}),
        {"conditions": "Staff only"},
        delete_status=405,
    ),
    "/giftcardacceptances/{id}/": Recipe(
        _create(f"{O}/giftcardacceptances/", {"acceptor": "rival"}), {"active": False}
    ),
    "/events/{event}/vouchers/{id}/": Recipe(_create(f"{E}/vouchers/", {}), {"comment": "VIP"}),
    "/events/{event}/waitinglistentries/{id}/": Recipe(_waiting, {"email": "x@example.org"}),
    "/events/{event}/sendmail_rules/{id}/": Recipe(
        _create(
            f"{E}/sendmail_rules/",
            {
                "subject": {"en": "Hi"},
                "template": {"en": "Hello"},
                "send_date": "2030-04-01T10:00:00Z",
            },
            plugins=True,
        ),
        {"subject": {"en": "Hello there"}},
    ),
    "/events/{event}/scheduled_exports/{id}/": Recipe(
        lambda env: _scheduled(env, event=True), {"mail_subject": "Daily"}
    ),
    "/scheduled_exports/{id}/": Recipe(
        lambda env: _scheduled(env, event=False), {"mail_subject": "Daily"}
    ),
    "/jobs/{job}/": Recipe(_job, change=_job_change),
    "/events/{event}/ticketlayouts/{id}/": Recipe(
        _create(f"{E}/ticketlayouts/", {"name": "Default"}), {"name": "Fancy"}
    ),
}
