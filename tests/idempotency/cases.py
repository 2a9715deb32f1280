"""A request that succeeds for every writing API route, for the idempotency test: the URL with
real objects in it and a valid body. The objects are made through the API itself (by the
all-powerful token), each only when a case asks for it.

Every route the routers declare must be in :data:`CASES` or in :data:`CANNOT_REPLAY` (with the
reason it cannot succeed twice or refuses keys); ``tests/idempotency/test_generated.py`` fails
for a route in neither.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tests.factories import Factory, World, auth
from tests.seating.helpers import layout

O = "/api/v1/organizers/{organizer}"  # noqa: E741
E = f"{O}/events/{{event}}"
WEBHOOK_TARGET = "https://example.org/hook"  # public-looking; the test delivers nothing
SLOT = {"start": "2030-05-01T09:00:00Z", "end": "2030-05-01T11:00:00Z"}  # a program time


class Scene:
    """Objects made on demand through the API; each kind once per test."""

    def __init__(self, client: Any, world: World) -> None:
        self.client = client
        self.world = world
        self.headers = auth(world.admin)
        self.o = f"/api/v1/organizers/{world.org.slug}"
        self.e = f"{self.o}/events/{world.event.slug}"
        self._made: dict[str, Any] = {}
        self.factory = Factory(client._transport.app.state.db.sessionmaker)

    def real(self, path: str) -> str:
        """The template path of a route with this scene's organizer and event in it."""
        return path.replace("{organizer}", self.world.org.slug).replace(
            "{event}", self.world.event.slug
        )

    async def call(self, method: str, url: str, body: Any = None) -> Any:
        response = await self.client.request(method, url, json=body, headers=self.headers)
        assert response.status_code < 300, f"{method} {url}: {response.text}"
        return response.json() if response.content else None

    async def _once(self, name: str, make: Callable[[], Awaitable[Any]]) -> Any:
        if name not in self._made:
            self._made[name] = await make()
        return self._made[name]

    async def plugins(self) -> None:
        await self._once(
            "plugins",
            lambda: self.call(
                "PATCH", f"{self.e}/", {"plugins": ["sendmail", "autocheckin", "ticketoutputpdf"]}
            ),
        )

    async def sold_out_item(self) -> dict:
        async def make() -> dict:
            item = await self.call(
                "POST", f"{self.e}/items/", {"name": {"en": "Gone"}, "default_price": "10.00"}
            )
            self._made["sold_out_quota"] = await self.call(
                "POST", f"{self.e}/quotas/", {"name": "None", "size": 0, "items": [item["id"]]}
            )
            return item

        return await self._once("sold_out_item", make)

    async def shirt(self) -> dict:
        return await self._once(
            "shirt",
            lambda: self.call(
                "POST",
                f"{self.e}/items/",
                {"name": {"en": "Shirt"}, "default_price": "20.00", "has_variations": True,
                 "variations": [{"value": {"en": "Red"}}, {"value": {"en": "Green"}}]},
            ),
        )  # fmt: skip

    async def shirt_variation(self) -> dict:
        return (await self.shirt())["variations"][0]

    async def series(self) -> dict:
        return await self._once(
            "series",
            lambda: self.call(
                "POST",
                f"{self.o}/events/",
                {"name": {"en": "Series"}, "slug": "series", "date_from": "2030-05-01T10:00:00Z",
                 "currency": "EUR", "has_subevents": True},
            ),
        )  # fmt: skip

    async def auto_rule(self) -> dict:
        await self.plugins()
        return await self._once(
            "auto_rule",
            lambda: self.call(
                "POST", f"{self.e}/auto_checkin_rules/", {"mode": "placed",
                                                         "all_sales_channels": True},
            ),
        )  # fmt: skip

    async def bearer(self) -> dict[str, str]:
        """A user's OAuth Bearer token (scheduled exports belong to users): the headers."""
        from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
        from tests.oauth.helpers import bearer_token, make_app

        async def make() -> dict[str, str]:
            user = await self.factory.user("owner@example.org")
            await self.factory.team(
                self.world.org,
                members=[user],
                event_permissions=list(EVENT_PERMISSIONS),
                organizer_permissions=list(ORGANIZER_PERMISSIONS),
            )
            app = await make_app(self.factory)
            token = await bearer_token(self.factory, app, user, [self.world.org])
            return {"Authorization": f"Bearer {token}"}

        return await self._once("bearer", make)

    async def scheduled_export(self, level: str) -> dict:
        headers = await self.bearer()

        async def make() -> dict:
            base = self.e if level == "event" else self.o
            response = await self.client.post(
                f"{base}/scheduled_exports/", json=export_body(level), headers=headers
            )
            assert response.status_code == 201, response.text
            return response.json()

        return await self._once(f"export-{level}", make)

    # -- the catalog ------------------------------------------------------------------------
    async def item(self) -> dict:
        async def make() -> dict:
            item = await self.call(
                "POST", f"{self.e}/items/", {"name": {"en": "Ticket"}, "default_price": "10.00"}
            )
            await self.call(
                "POST", f"{self.e}/quotas/", {"name": "All", "size": 100, "items": [item["id"]]}
            )
            return item

        return await self._once("item", make)

    async def second_item(self) -> dict:
        async def make() -> dict:
            item = await self.call(
                "POST", f"{self.e}/items/", {"name": {"en": "Extra"}, "default_price": "5.00"}
            )
            await self.call(
                "POST", f"{self.e}/quotas/", {"name": "Extra", "size": 100, "items": [item["id"]]}
            )
            return item

        return await self._once("second_item", make)

    async def category(self) -> dict:
        return await self._once(
            "category",
            lambda: self.call(
                "POST", f"{self.e}/categories/", {"name": {"en": "Add-ons"}, "is_addon": True}
            ),
        )

    async def addon(self) -> dict:
        item, category = await self.item(), await self.category()
        return await self._once(
            "addon",
            lambda: self.call(
                "POST", f"{self.e}/items/{item['id']}/addons/", {"addon_category": category["id"]}
            ),
        )

    async def bundle(self) -> dict:
        item, extra = await self.item(), await self.second_item()
        return await self._once(
            "bundle",
            lambda: self.call(
                "POST",
                f"{self.e}/items/{item['id']}/bundles/",
                {"bundled_item": extra["id"], "count": 1},
            ),
        )

    async def program_time(self) -> dict:
        item = await self.item()
        return await self._once(
            "program_time",
            lambda: self.call("POST", f"{self.e}/items/{item['id']}/program_times/", SLOT),
        )

    async def taxrule(self) -> dict:
        return await self._once(
            "taxrule",
            lambda: self.call("POST", f"{self.e}/taxrules/", {"name": {"en": "VAT"}, "rate": "19"}),
        )

    async def question(self) -> dict:
        item = await self.item()
        return await self._once(
            "question",
            lambda: self.call(
                "POST",
                f"{self.e}/questions/",
                {"question": {"en": "Diet?"}, "type": "C", "items": [item["id"]],
                 "identifier": "DIET",
                 "options": [{"answer": {"en": "Vegan"}, "identifier": "VEGAN"}]},
            ),
        )  # fmt: skip

    async def option(self) -> dict:
        question = await self.question()
        return question["options"][0]

    async def quota(self) -> dict:
        return await self._once(
            "quota",
            lambda: self.call("POST", f"{self.e}/quotas/", {"name": "Spare", "size": 5}),
        )

    async def discount(self) -> dict:
        return await self._once(
            "discount",
            lambda: self.call(
                "POST",
                f"{self.e}/discounts/",
                {"internal_name": "Group", "condition_min_count": 3,
                 "benefit_discount_matching_percent": "10.00"},
            ),
        )  # fmt: skip

    async def subevent(self) -> dict:
        async def make() -> dict:
            await self.series()
            return await self.call(
                "POST",
                f"{self.o}/events/series/subevents/",
                {"name": {"en": "Day 1"}, "date_from": "2030-05-01T10:00:00Z"},
            )

        return await self._once("subevent", make)

    async def checkinlist(self) -> dict:
        return await self._once(
            "checkinlist",
            lambda: self.call("POST", f"{self.e}/checkinlists/", {"name": "Door"}),
        )

    # -- sales ------------------------------------------------------------------------------
    async def order(self, name: str = "order", **extra: Any) -> dict:
        item = await self.item()
        body = {"email": f"{name}@example.org", "positions": [{"item": item["id"]}], **extra}
        return await self._once(name, lambda: self.call("POST", f"{self.e}/orders/", body))

    async def paid_order(self) -> dict:
        return await self.order("paid", status="p", payment_provider="manual")

    async def pending_payment(self) -> tuple[dict, dict]:
        order = await self.order()
        payment = await self._once(
            "payment",
            lambda: self.call(
                "POST",
                f"{self.e}/orders/{order['code']}/payments/",
                {"amount": "10.00", "provider": "manual", "state": "created"},
            ),
        )
        return order, payment

    async def confirmed_payment(self) -> tuple[dict, dict]:
        order = await self.paid_order()
        fresh = await self.call("GET", f"{self.e}/orders/{order['code']}/")
        return fresh, fresh["payments"][0]

    async def refund(self, state: str = "created") -> tuple[dict, dict]:
        order, payment = await self.confirmed_payment()
        refund = await self._once(
            f"refund-{state}",
            lambda: self.call(
                "POST",
                f"{self.e}/orders/{order['code']}/refunds/",
                {"state": state, "source": "admin", "amount": "1.00",
                 "payment": payment["local_id"], "provider": "manual"},
            ),
        )  # fmt: skip
        return order, refund

    async def cart(self) -> dict:
        item = await self.item()
        return await self._once(
            "cart",
            lambda: self.call(
                "POST", f"{self.e}/cartpositions/", {"item": item["id"], "price": "10.00"}
            ),
        )

    async def voucher(self) -> dict:
        return await self._once(
            "voucher",
            lambda: self.call("POST", f"{self.e}/vouchers/", {"code": "SPRING", "max_usages": 5}),
        )

    async def giftcard(self) -> dict:
        return await self._once(
            "giftcard",
            lambda: self.call(
                "POST", f"{self.o}/giftcards/", {"secret": "GIFT1234", "value": "20.00",
                                                 "currency": "EUR"},
            ),
        )  # fmt: skip

    async def waiting(self) -> dict:
        item = await self.sold_out_item()
        return await self._once(
            "waiting",
            lambda: self.call(
                "POST",
                f"{self.e}/waitinglistentries/",
                {"email": "wait@example.org", "item": item["id"]},
            ),
        )

    # -- the organizer ----------------------------------------------------------------------
    async def team(self) -> dict:
        return await self._once(
            "team", lambda: self.call("POST", f"{self.o}/teams/", {"name": "Door staff"})
        )

    async def invite(self) -> tuple[dict, dict]:
        team = await self.team()
        invite = await self._once(
            "invite",
            lambda: self.call(
                "POST", f"{self.o}/teams/{team['id']}/invites/", {"email": "new@example.org"}
            ),
        )
        return team, invite

    async def team_token(self) -> tuple[dict, dict]:
        team = await self.team()
        token = await self._once(
            "team_token",
            lambda: self.call("POST", f"{self.o}/teams/{team['id']}/tokens/", {"name": "Sync"}),
        )
        return team, token

    async def meta_property(self) -> dict:
        return await self._once(
            "meta",
            lambda: self.call("POST", f"{self.o}/meta_properties/", {"name": "Region"}),
        )

    async def webhook(self) -> dict:
        return await self._once(
            "webhook",
            lambda: self.call(
                "POST",
                f"{self.o}/webhooks/",
                {"target_url": WEBHOOK_TARGET, "all_events": True,
                 "action_types": ["pretix.event.order.placed"]},
            ),
        )  # fmt: skip

    async def customer(self) -> dict:
        return await self._once(
            "customer",
            lambda: self.call("POST", f"{self.o}/customers/", {"email": "cust@example.org"}),
        )

    async def membership_type(self) -> dict:
        return await self._once(
            "mtype",
            lambda: self.call(
                "POST",
                f"{self.o}/membershiptypes/",
                {"name": {"en": "Season"}, "transferable": False},
            ),
        )

    async def membership(self) -> dict:
        customer, mtype = await self.customer(), await self.membership_type()
        return await self._once(
            "membership",
            lambda: self.call(
                "POST",
                f"{self.o}/memberships/",
                {"customer": customer["identifier"], "membership_type": mtype["id"],
                 "date_start": "2030-01-01T00:00:00Z", "date_end": "2030-12-31T00:00:00Z"},
            ),
        )  # fmt: skip

    async def gate(self) -> dict:
        return await self._once(
            "gate", lambda: self.call("POST", f"{self.o}/gates/", {"name": "North"})
        )

    async def device(self) -> dict:
        return await self._once(
            "device",
            lambda: self.call(
                "POST", f"{self.o}/devices/", {"name": "Scanner", "all_events": True}
            ),
        )

    async def giftcard_acceptance(self) -> dict:
        other = self.world.other.slug
        return await self._once(
            "acceptance",
            lambda: self.call(
                "POST", f"{self.o}/giftcardacceptances/", {"acceptor": other, "active": True}
            ),
        )

    async def sendmail_rule(self) -> dict:
        await self.plugins()
        return await self._once(
            "sendmail",
            lambda: self.call(
                "POST",
                f"{self.e}/sendmail_rules/",
                {"subject": {"en": "Soon"}, "template": {"en": "See you"},
                 "send_offset_days": 1, "send_offset_time": "09:00", "date_is_absolute": False},
            ),
        )  # fmt: skip

    async def ticket_layout(self) -> dict:
        return await self._once(
            "layout",
            lambda: self.call("POST", f"{self.e}/ticketlayouts/", {"name": "Plain", "layout": []}),
        )

    # -- seating --------------------------------------------------------------------------
    async def seating_plan(self) -> dict:
        return await self._once(
            "seating_plan",
            lambda: self.call("POST", f"{self.o}/seatingplans/", {"name": "Hall",
                                                                  "layout": layout()}),
        )  # fmt: skip

    async def seats(self, subevent: bool = False) -> tuple[str, list[dict]]:
        """The seats URL of the event (or of a date of the series) given the plan; its seats."""

        async def make() -> tuple[str, list[dict]]:
            plan = await self.seating_plan()
            if subevent:
                sub = await self.subevent()
                owner = f"{self.o}/events/series/subevents/{sub['id']}/"
                await self.call("PATCH", owner, {"seating_plan": plan["id"]})
                base = f"{owner}seats/"
            else:
                item = await self.item()
                mapping = {"Stalls": item["id"], "Balcony": None}
                await self.call(
                    "PATCH", f"{self.e}/", {"seating_plan": plan["id"],
                                            "seat_category_mapping": mapping},
                )  # fmt: skip
                base = f"{self.e}/seats/"
            listed = await self.call("GET", base)
            assert listed["count"] == 5, listed
            return base, listed["results"]

        return await self._once(f"seats-{subevent}", make)

    async def blocked_seats(self, subevent: bool = False) -> tuple[str, list[dict]]:
        """The seats of :meth:`seats`, all blocked (so that unblocking changes them)."""
        base, seats = await self.seats(subevent)
        await self.call("POST", f"{base}bulk_block/", {"ids": [s["id"] for s in seats]})
        return base, seats

    # -- a recorded webhook call, a finished shredder export ------------------------------
    async def webhook_call(self) -> tuple[dict, int]:
        """The webhook and a call of it that failed (written to the log as delivery would)."""
        from admit.db import utcnow
        from admit.models import WebhookCall

        hook = await self.webhook()

        async def make() -> int:
            async with self.factory.sessionmaker() as session:
                call = WebhookCall(
                    webhook_id=hook["id"], source="notification", source_id=1,
                    action="pretix.event.order.placed",
                    payload={"organizer": self.world.org.slug, "code": "ABC12"},
                    status="failed", attempts=3, response_status=500, error="HTTP 500",
                    last_attempt=utcnow(),
                )  # fmt: skip
                session.add(call)
                await session.commit()
                return call.id

        return hook, await self._once("webhook_call", make)

    async def shredder_export(self) -> str:
        """The shred URL of a finished export (run by the app's job engine, here)."""

        async def make() -> str:
            await self.call("PATCH", f"{self.e}/", {"date_from": "2020-01-01T10:00:00Z"})
            await self.order()
            app = self.client._transport.app
            async with app.state.background.serving(scheduler=False):
                links = await self.call(
                    "POST", f"{self.e}/shredders/export/", {"shredders": ["order_emails"]}
                )
                download = links["download"].removeprefix("http://testserver")
                deadline = time.monotonic() + 20
                while (
                    answer := await self.client.get(download, headers=self.headers)
                ).status_code == 409:
                    assert time.monotonic() < deadline, answer.text
                    await asyncio.sleep(0.05)
                assert answer.status_code == 200, answer.text
            return links["shred"].removeprefix("http://testserver")

        return await self._once("shredder_export", make)


# A case gives the URL and the body (and the headers, when not the team token's).
Case = Callable[[Scene], Awaitable[tuple[Any, ...]]]
CASES: dict[tuple[str, str], Case] = {}


def case(method: str, path: str) -> Callable[[Case], Case]:
    def register(fn: Case) -> Case:
        CASES[(method, path)] = fn
        return fn

    return register


def crud(
    path: str,
    make: Callable[[Scene], Awaitable[dict]],
    create: Callable[[Scene], Awaitable[Any]],
    put: Callable[[Scene], Awaitable[Any]] | None,
    patch: Callable[[Scene], Awaitable[Any]],
    *,
    delete: bool = True,
    key: str = "id",
) -> None:
    """The cases of a plain resource: create a new one, PUT / PATCH / DELETE one made."""

    async def do_create(s: Scene) -> tuple[str, Any]:
        return s.real(f"{path}/"), await create(s)

    CASES[("POST", f"{path}/")] = do_create
    one = f"{path}/{{id}}/"

    async def do_put(s: Scene) -> tuple[str, Any]:
        obj = await make(s)
        return s.real(f"{path}/{obj[key]}/"), await put(s)  # type: ignore[misc]

    async def do_patch(s: Scene) -> tuple[str, Any]:
        obj = await make(s)
        return s.real(f"{path}/{obj[key]}/"), await patch(s)

    async def do_delete(s: Scene) -> tuple[str, Any]:
        obj = await make(s)
        return s.real(f"{path}/{obj[key]}/"), None

    if put is not None:
        CASES[("PUT", one)] = do_put
    CASES[("PATCH", one)] = do_patch
    if delete:
        CASES[("DELETE", one)] = do_delete


def const(value: Any) -> Callable[[Scene], Awaitable[Any]]:
    async def body(_s: Scene) -> Any:
        return value

    return body


# -- plain resources -------------------------------------------------------------------------
crud(f"{E}/checkinlists", Scene.checkinlist, const({"name": "Side door"}),
     const({"name": "Front"}), const({"name": "Back"}))  # fmt: skip
crud(f"{O}/teams", Scene.team, const({"name": "Box office"}), const({"name": "Renamed"}),
     const({"name": "Patched"}))  # fmt: skip
crud(f"{O}/meta_properties", Scene.meta_property, const({"name": "Venue"}),
     const({"name": "Area"}), const({"name": "Zone"}))  # fmt: skip
crud(f"{E}/taxrules", Scene.taxrule, const({"name": {"en": "Reduced"}, "rate": "7.00"}),
     const({"name": {"en": "VAT"}, "rate": "16.00"}), const({"rate": "20.00"}))  # fmt: skip
crud(f"{E}/categories", Scene.category, const({"name": {"en": "Merch"}}),
     const({"name": {"en": "Goods"}}), const({"name": {"en": "Things"}}))  # fmt: skip
crud(f"{E}/items", Scene.second_item, const({"name": {"en": "VIP"}, "default_price": "99.00"}),
     const({"name": {"en": "Extra+"}, "default_price": "6.00"}),
     const({"default_price": "7.00"}))  # fmt: skip
crud(f"{E}/quotas", Scene.quota, const({"name": "Late", "size": 7}),
     const({"name": "Spare", "size": 8}), const({"size": 9}))  # fmt: skip
crud(f"{E}/discounts", Scene.discount,
     const({"internal_name": "Pair", "condition_min_count": 2,
            "benefit_discount_matching_percent": "5.00"}),
     const({"internal_name": "Group", "condition_min_count": 4,
            "benefit_discount_matching_percent": "10.00"}),
     const({"internal_name": "Groups"}))  # fmt: skip
crud(f"{O}/gates", Scene.gate, const({"name": "South"}), const({"name": "East"}),
     const({"name": "West"}))  # fmt: skip
crud(f"{O}/webhooks", Scene.webhook,
     const({"target_url": WEBHOOK_TARGET, "all_events": True,
            "action_types": ["pretix.event.order.paid"]}),
     const({"target_url": "https://example.org/other", "all_events": True,
            "action_types": ["pretix.event.order.paid"]}),
     const({"enabled": False}))  # fmt: skip
crud(f"{O}/membershiptypes", Scene.membership_type,
     const({"name": {"en": "Day"}, "transferable": True}),
     const({"name": {"en": "Season+"}, "transferable": True}),
     const({"allow_parallel_usage": True}))  # fmt: skip


async def _sendmail_create(s: Scene) -> dict:
    await s.plugins()
    return {"subject": {"en": "Later"}, "template": {"en": "Hi"}, "send_offset_days": 2,
            "send_offset_time": "10:00", "date_is_absolute": False}  # fmt: skip


crud(f"{E}/sendmail_rules", Scene.sendmail_rule, _sendmail_create,
     const({"subject": {"en": "Soon!"}, "template": {"en": "See you"}, "send_offset_days": 1,
            "send_offset_time": "09:00", "date_is_absolute": False}),
     const({"enabled": False}))  # fmt: skip
crud(f"{E}/ticketlayouts", Scene.ticket_layout, const({"name": "Other", "layout": []}),
     const({"name": "Plain 2", "layout": [], "default": True}),
     const({"name": "Plain 3"}))  # fmt: skip
crud(f"{O}/customers", Scene.customer, const({"email": "new@example.org"}),
     const({"email": "cust@example.org", "name_parts": {"full_name": "C"}}),
     const({"email": "changed@example.org"}), delete=False, key="identifier")  # fmt: skip
crud(f"{O}/devices", Scene.device, const({"name": "Gate 2", "all_events": True}),
     const({"name": "Renamed", "all_events": True}), const({"name": "Patched"}),
     delete=False, key="device_id")  # fmt: skip


async def _item_body(s: Scene, **extra: Any) -> dict:
    return {"item": (await s.item())["id"], **extra}


async def _waiting_create(s: Scene) -> dict:
    return {"item": (await s.sold_out_item())["id"], "email": "w2@example.org"}


crud(f"{E}/waitinglistentries", Scene.waiting, _waiting_create, _waiting_create,
     const({"email": "w3@example.org"}))  # fmt: skip


async def _giftcard_create(s: Scene) -> dict:
    return {"secret": "NEWCARD1", "value": "10.00", "currency": "EUR"}


crud(f"{O}/giftcards", Scene.giftcard, _giftcard_create,
     const({"secret": "GIFT1234", "value": "25.00", "currency": "EUR"}),
     const({"value": "30.00"}), delete=False)  # fmt: skip


async def _voucher_create(s: Scene) -> dict:
    return {"code": "AUTUMN", "max_usages": 2}


crud(f"{E}/vouchers", Scene.voucher, _voucher_create, const({"code": "SPRING", "max_usages": 9}),
     const({"max_usages": 3}))  # fmt: skip


async def _membership_create(s: Scene) -> dict:
    customer, mtype = await s.customer(), await s.membership_type()
    return {"customer": customer["identifier"], "membership_type": mtype["id"],
            "date_start": "2031-01-01T00:00:00Z", "date_end": "2031-12-31T00:00:00Z"}  # fmt: skip


crud(f"{O}/memberships", Scene.membership, _membership_create, _membership_create,
     const({"date_end": "2031-06-30T00:00:00Z"}), delete=False)  # fmt: skip


async def _acceptance_create(s: Scene) -> dict:
    return {"acceptor": s.world.other.slug, "active": False}


crud(f"{O}/giftcardacceptances", Scene.giftcard_acceptance, _acceptance_create,
     _acceptance_create, const({"active": False}))  # fmt: skip


def _series(path: str) -> str:
    return path.replace("/events/summit/", "/events/series/")


@case("POST", f"{E}/subevents/")
async def _subevent_create(s: Scene) -> tuple[str, Any]:
    await s.series()
    return _series(s.real(f"{E}/subevents/")), {
        "name": {"en": "Day 2"}, "date_from": "2030-05-02T10:00:00Z"}  # fmt: skip


def _subevent_one(method: str, body: Any) -> None:
    async def run(s: Scene) -> tuple[str, Any]:
        sub = await s.subevent()
        return _series(s.real(f"{E}/subevents/{sub['id']}/")), body

    CASES[(method, f"{E}/subevents/{{id}}/")] = run


_subevent_one("PUT", {"name": {"en": "Day one"}, "date_from": "2030-05-01T10:00:00Z"})
_subevent_one("PATCH", {"name": {"en": "First day"}})
_subevent_one("DELETE", None)


async def _question_create(s: Scene) -> dict:
    return {
        "question": {"en": "Size?"},
        "type": "S",
        "items": [(await s.item())["id"]],
        "identifier": "SIZE",
    }


async def _question_put(s: Scene) -> dict:
    return {
        "question": {"en": "Diet!"},
        "type": "C",
        "items": [(await s.item())["id"]],
        "identifier": "DIET",
    }


crud(f"{E}/questions", Scene.question, _question_create, _question_put,
     const({"required": True}))  # fmt: skip


def nested(parent: str, child: str, make_parent, make_child, create, put, patch) -> None:
    """The cases of a resource under another (variations of an item, options of a question)."""
    one = f"{parent}/{child}/{{id}}/"

    async def urls(s: Scene, with_child: bool) -> str:
        owner = (await make_parent(s))["id"]
        base = s.real(parent.rsplit("/", 1)[0]) + f"/{owner}/{child}/"
        return base + (f"{(await make_child(s))['id']}/" if with_child else "")

    async def c_create(s: Scene) -> tuple[str, Any]:
        return await urls(s, False), await create(s)

    async def c_put(s: Scene) -> tuple[str, Any]:
        return await urls(s, True), await put(s)

    async def c_patch(s: Scene) -> tuple[str, Any]:
        return await urls(s, True), await patch(s)

    async def c_delete(s: Scene) -> tuple[str, Any]:
        return await urls(s, True), None

    CASES[("POST", f"{parent}/{child}/")] = c_create
    CASES[("PUT", one)] = c_put
    CASES[("PATCH", one)] = c_patch
    CASES[("DELETE", one)] = c_delete


async def _second_item_id(s: Scene) -> dict:
    return {"bundled_item": (await s.second_item())["id"], "count": 2}


async def _category_body(s: Scene) -> dict:
    return {"addon_category": (await s.category())["id"], "max_count": 2}


nested(f"{E}/items/{{item}}", "variations", Scene.shirt, Scene.shirt_variation,
       const({"value": {"en": "Blue"}}), const({"value": {"en": "Crimson"}}),
       const({"active": False}))  # fmt: skip
nested(f"{E}/items/{{item}}", "addons", Scene.item, Scene.addon, _category_body, _category_body,
       const({"min_count": 1}))  # fmt: skip
nested(f"{E}/items/{{item}}", "bundles", Scene.item, Scene.bundle, _second_item_id,
       _second_item_id, const({"count": 3}))  # fmt: skip
nested(f"{E}/items/{{item}}", "program_times", Scene.item, Scene.program_time, const(SLOT),
       const({"start": "2030-05-02T09:00:00Z", "end": "2030-05-02T10:00:00Z"}),
       const({"end": "2030-05-01T12:00:00Z"}))  # fmt: skip
nested(f"{E}/questions/{{question}}", "options", Scene.question, Scene.option,
       const({"answer": {"en": "Vegetarian"}, "identifier": "VEGGIE"}),
       const({"answer": {"en": "Vegan!"}, "identifier": "VEGAN"}),
       const({"answer": {"en": "Plant-based"}}))  # fmt: skip


# -- the event and the organizer's events ------------------------------------------------------
@case("POST", f"{O}/events/")
async def _event_create(s: Scene) -> tuple[str, Any]:
    return s.real(f"{O}/events/"), {
        "name": {"en": "Gala"}, "slug": "gala", "date_from": "2030-06-01T18:00:00Z",
        "currency": "EUR"}  # fmt: skip


@case("POST", f"{E}/clone/")
async def _event_clone(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/clone/"), {
        "name": {"en": "Summit II"}, "slug": "summit2", "date_from": "2031-05-01T10:00:00Z",
        "currency": "EUR"}  # fmt: skip


@case("PATCH", f"{E}/")
async def _event_patch(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/"), {"name": {"en": "Summit 2030"}}


@case("PUT", f"{E}/")
async def _event_put(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/"), {
        "name": {"en": "Summit!"}, "slug": s.world.event.slug,
        "date_from": "2030-05-01T10:00:00Z", "currency": "EUR"}  # fmt: skip


@case("DELETE", f"{E}/")
async def _event_delete(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/"), None


@case("PATCH", f"{O}/settings/")
async def _organizer_settings_patch(s: Scene) -> tuple[str, Any]:
    return s.real(f"{O}/settings/"), {"customer_accounts": True, "contact_mail": "a@b.example"}


@case("PATCH", f"{E}/settings/")
async def _settings_patch(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/settings/"), {"payment_term_days": 2, "waiting_list_hours": 5}


@case("PATCH", f"{E}/waitinglist_settings/")
async def _wl_patch(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/waitinglist_settings/"), {"waiting_list_enabled": True}


@case("PUT", f"{E}/waitinglist_settings/")
async def _wl_put(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/waitinglist_settings/"), {"waiting_list_enabled": True}


# -- teams ------------------------------------------------------------------------------------
@case("POST", f"{O}/teams/{{team}}/invites/")
async def _invite(s: Scene) -> tuple[str, Any]:
    team = await s.team()
    return s.real(f"{O}/teams/{team['id']}/invites/"), {"email": "other@example.org"}


@case("DELETE", f"{O}/teams/{{team}}/invites/{{id}}/")
async def _invite_delete(s: Scene) -> tuple[str, Any]:
    team, invite = await s.invite()
    return s.real(f"{O}/teams/{team['id']}/invites/{invite['id']}/"), None


@case("POST", f"{O}/teams/{{team}}/tokens/")
async def _token(s: Scene) -> tuple[str, Any]:
    team = await s.team()
    return s.real(f"{O}/teams/{team['id']}/tokens/"), {"name": "Another"}


@case("DELETE", f"{O}/teams/{{team}}/tokens/{{id}}/")
async def _token_delete(s: Scene) -> tuple[str, Any]:
    team, token = await s.team_token()
    return s.real(f"{O}/teams/{team['id']}/tokens/{token['id']}/"), None


# -- carts and orders -------------------------------------------------------------------------
@case("POST", f"{E}/cartpositions/")
async def _cart(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/cartpositions/"), await _item_body(s, price="10.00")


@case("POST", f"{E}/cartpositions/bulk_create/")
async def _cart_bulk(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/cartpositions/bulk_create/"), [await _item_body(s, price="10.00")] * 2


@case("DELETE", f"{E}/cartpositions/{{id}}/")
async def _cart_delete(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/cartpositions/{(await s.cart())['id']}/"), None


@case("POST", f"{E}/orders/")
async def _order(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/orders/"), {"email": "buyer@example.org",
                                    "positions": [await _item_body(s)]}  # fmt: skip


@case("PATCH", f"{E}/orders/{{code}}/")
async def _order_patch(s: Scene) -> tuple[str, Any]:
    order = await s.order()
    return s.real(f"{E}/orders/{order['code']}/"), {"comment": "Call first"}


@case("DELETE", f"{E}/orders/{{code}}/")
async def _order_delete(s: Scene) -> tuple[str, Any]:
    order = await s.order("test", testmode=True)
    return s.real(f"{E}/orders/{order['code']}/"), None


def order_action(action: str, make: Callable[[Scene], Awaitable[dict]], body: Any = None) -> None:
    async def run(s: Scene) -> tuple[str, Any]:
        order = await make(s)
        return s.real(f"{E}/orders/{order['code']}/{action}/"), body

    CASES[("POST", f"{E}/orders/{{code}}/{action}/")] = run


async def _expired(s: Scene) -> dict:
    order = await s.order("expired")
    await s.call("POST", s.real(f"{E}/orders/{order['code']}/mark_expired/"))
    return order


async def _canceled(s: Scene) -> dict:
    order = await s.order("canceled")
    await s.call("POST", s.real(f"{E}/orders/{order['code']}/mark_canceled/"))
    return order


async def _needs_approval(s: Scene) -> dict:
    return await s.order("approval", require_approval=True)


order_action("mark_paid", Scene.order)
order_action("mark_pending", Scene.paid_order)
order_action("mark_expired", Scene.order)
order_action("mark_canceled", Scene.order)
order_action("reactivate", _canceled)
order_action("extend", Scene.order, {"expires": "2030-04-01T00:00:00Z"})
order_action("approve", _needs_approval)
order_action("deny", _needs_approval)
order_action("regenerate_secrets", Scene.order)
order_action("resend_link", Scene.order)
order_action("create_invoice", Scene.order)


async def _invoice_url(s: Scene, action: str) -> tuple[str, Any]:
    order = await s.order(f"invoice-{action}")
    made = await s.call("POST", s.real(f"{E}/orders/{order['code']}/create_invoice/"))
    return s.real(f"{E}/invoices/{made['number']}/{action}/"), None


@case("POST", f"{E}/invoices/{{number}}/regenerate/")
async def _invoice_regenerate(s: Scene) -> tuple[str, Any]:
    return await _invoice_url(s, "regenerate")


@case("POST", f"{E}/invoices/{{number}}/reissue/")
async def _invoice_reissue(s: Scene) -> tuple[str, Any]:
    return await _invoice_url(s, "reissue")


@case("POST", f"{E}/orders/{{code}}/change/")
async def _order_change(s: Scene) -> tuple[str, Any]:
    order = await s.order()
    extra = await s.second_item()
    return s.real(f"{E}/orders/{order['code']}/change/"), {
        "patch_positions": [{"position": order["positions"][0]["id"],
                             "body": {"item": extra["id"]}}]}  # fmt: skip


@case("PATCH", f"{E}/orderpositions/{{id}}/")
async def _position_patch(s: Scene) -> tuple[str, Any]:
    order = await s.order()
    return s.real(f"{E}/orderpositions/{order['positions'][0]['id']}/"), {
        "attendee_email": "guest@example.org"}  # fmt: skip


@case("DELETE", f"{E}/orderpositions/{{id}}/")
async def _position_delete(s: Scene) -> tuple[str, Any]:
    item = await s.item()
    order = await s.order("two", positions=[{"item": item["id"]}, {"item": item["id"]}])
    return s.real(f"{E}/orderpositions/{order['positions'][1]['id']}/"), None


@case("POST", f"{E}/orderpositions/{{id}}/printlog/")
async def _printlog(s: Scene) -> tuple[str, Any]:
    order = await s.order()
    return s.real(f"{E}/orderpositions/{order['positions'][0]['id']}/printlog/"), {
        "source": "pretixpos", "type": "badge", "datetime": "2030-05-01T09:00:00Z"}  # fmt: skip


@case("POST", f"{E}/orders/{{code}}/payments/")
async def _payment(s: Scene) -> tuple[str, Any]:
    order = await s.order()
    return s.real(f"{E}/orders/{order['code']}/payments/"), {
        "amount": "10.00", "provider": "manual", "state": "created"}  # fmt: skip


def payment_action(action: str, make, body: Any = None, kind: str = "payments") -> None:
    async def run(s: Scene) -> tuple[str, Any]:
        order, obj = await make(s)
        return s.real(f"{E}/orders/{order['code']}/{kind}/{obj['local_id']}/{action}/"), body

    CASES[("POST", f"{E}/orders/{{code}}/{kind}/{{local_id}}/{action}/")] = run


async def _created_refund(s: Scene) -> tuple[dict, dict]:
    return await s.refund("created")


async def _external_refund(s: Scene) -> tuple[dict, dict]:
    return await s.refund("external")


payment_action("confirm", Scene.pending_payment, {"force": False})
payment_action("cancel", Scene.pending_payment)
payment_action("refund", Scene.confirmed_payment, {"amount": "1.00", "mark_canceled": False})
payment_action("done", _created_refund, kind="refunds")
payment_action("process", _external_refund, {"mark_canceled": False}, kind="refunds")
payment_action("cancel", _created_refund, kind="refunds")


@case("POST", f"{E}/orders/{{code}}/refunds/")
async def _refund(s: Scene) -> tuple[str, Any]:
    order, payment = await s.confirmed_payment()
    return s.real(f"{E}/orders/{order['code']}/refunds/"), {
        "state": "created", "source": "admin", "amount": "2.00",
        "payment": payment["local_id"], "provider": "manual"}  # fmt: skip


# -- vouchers, gift cards, waiting list ---------------------------------------------------------
@case("POST", f"{E}/vouchers/batch_create/")
async def _voucher_batch(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/vouchers/batch_create/"), [{"code": "BATCH1"}, {"code": "BATCH2"}]


@case("POST", f"{O}/giftcards/{{id}}/transact/")
async def _transact(s: Scene) -> tuple[str, Any]:
    card = await s.giftcard()
    return s.real(f"{O}/giftcards/{card['id']}/transact/"), {"value": "-5.00"}


@case("POST", f"{E}/waitinglistentries/{{id}}/send_voucher/")
async def _send_voucher(s: Scene) -> tuple[str, Any]:
    entry = await s.waiting()
    quota = s._made["sold_out_quota"]
    await s.call("PATCH", f"{s.e}/quotas/{quota['id']}/", {"size": 10})  # available again
    return s.real(f"{E}/waitinglistentries/{entry['id']}/send_voucher/"), None


# -- check-in -----------------------------------------------------------------------------------
@case("POST", f"{O}/checkinrpc/redeem/")
async def _redeem(s: Scene) -> tuple[str, Any]:
    order = await s.paid_order()
    clist = await s.checkinlist()
    return s.real(f"{O}/checkinrpc/redeem/"), {
        "secret": order["positions"][0]["secret"], "lists": [clist["id"]]}  # fmt: skip


@case("POST", f"{E}/checkinlists/{{id}}/failed_checkins/")
async def _failed_checkin(s: Scene) -> tuple[str, Any]:
    clist = await s.checkinlist()
    return s.real(f"{E}/checkinlists/{clist['id']}/failed_checkins/"), {
        "error_reason": "invalid", "raw_barcode": "NOT-A-TICKET",
        "datetime": "2030-03-01T10:00:00Z"}  # fmt: skip


@case("POST", f"{O}/checkinrpc/annul/")
async def _annul(s: Scene) -> tuple[str, Any]:
    order = await s.paid_order()
    clist = await s.checkinlist()
    scan = await s.call("POST", s.real(f"{O}/checkinrpc/redeem/"), {
        "secret": order["positions"][0]["secret"], "lists": [clist["id"]],
        "nonce": "scan-1"})  # fmt: skip
    assert scan["status"] == "ok", scan
    return s.real(f"{O}/checkinrpc/annul/"), {"nonce": "scan-1", "lists": [clist["id"]]}


# -- organizer-level actions ----------------------------------------------------------------------
@case("POST", f"{O}/webhooks/{{id}}/rotate_secret/")
async def _rotate(s: Scene) -> tuple[str, Any]:
    return s.real(f"{O}/webhooks/{(await s.webhook())['id']}/rotate_secret/"), None


@case("POST", f"{O}/customers/{{id}}/anonymize/")
async def _anonymize(s: Scene) -> tuple[str, Any]:
    return s.real(f"{O}/customers/{(await s.customer())['identifier']}/anonymize/"), None


@case("POST", f"{E}/exporters/{{identifier}}/run/")
async def _export_event(s: Scene) -> tuple[str, Any]:
    return s.real(f"{E}/exporters/quotalist/run/"), {"_format": "csv"}


@case("POST", f"{O}/exporters/{{identifier}}/run/")
async def _export_organizer(s: Scene) -> tuple[str, Any]:
    return s.real(f"{O}/exporters/giftcardlist/run/"), {"_format": "csv"}


@case("POST", f"{E}/shredders/export/")
async def _shred_export(s: Scene) -> tuple[str, Any]:
    await s.call("PATCH", s.e + "/", {"date_from": "2020-01-01T10:00:00Z"})  # over: shreddable
    return s.real(f"{E}/shredders/export/"), {"shredders": ["order_emails"]}


@case("POST", f"{E}/ticketpdfrenderer/render_batch/")
async def _render(s: Scene) -> tuple[str, Any]:
    order = await s.order()
    return s.real(f"{E}/ticketpdfrenderer/render_batch/"), {
        "parts": [{"orderposition": order["positions"][0]["id"]}]}  # fmt: skip


async def _auto_rule_create(s: Scene) -> dict:
    await s.plugins()
    return {"mode": "placed", "all_sales_channels": True}


async def _auto_rule_put(s: Scene) -> dict:
    return {"mode": "placed", "all_sales_channels": False, "limit_sales_channels": ["api"]}


crud(f"{E}/auto_checkin_rules", Scene.auto_rule, _auto_rule_create, _auto_rule_put,
     const({"all_sales_channels": False, "limit_sales_channels": ["web"]}))  # fmt: skip


# -- routes without a case ----------------------------------------------------------------------
# Answers that carry a secret shown once (a team API token, a device token, OAuth tokens, a
# webhook's signing secret). Today a repeat replays them like any answer; if they come to
# refuse idempotency keys (or keep them encrypted), this list is the one place to change.

# Routes whose success cannot be repeated with the same key by this test, and why.
CANNOT_REPLAY: dict[tuple[str, str], str] = {
    ("POST", "/api/v1/device/initialize"): "takes no credentials: a one-time token in the body "
    "authenticates it, and a key is bound to credentials",
    ("POST", "/api/v1/device/update"): "authenticated by a device token, not a team token",
    ("POST", "/api/v1/device/roll"): "authenticated by a device token, not a team token",
    ("POST", "/api/v1/device/revoke"): "authenticated by a device token, not a team token",
    ("POST", "/api/v1/oauth/token"): "an OAuth client's form-encoded request (RFC 6749), "
    "authenticated by the client, not an API call with a JSON body",
    ("POST", "/api/v1/oauth/revoke_token"): "an OAuth client's form-encoded request (RFC 7009)",
    ("POST", "/api/v1/upload"): "a raw file body, not JSON",
    ("DELETE", f"{O}/giftcards/{{id}}/"): "always refused: gift cards cannot be deleted",
}


# -- scheduled exports (owned by users: an OAuth Bearer token) -----------------------------------
def export_body(level: str, subject: str = "Quotas") -> dict:
    return {
        "export_identifier": "quotalist" if level == "event" else "giftcardlist",
        "export_form_data": {"_format": "csv"}, "locale": "en",
        "mail_additional_recipients": "", "mail_additional_recipients_cc": "",
        "mail_additional_recipients_bcc": "", "mail_subject": subject,
        "mail_template": "Attached.", "schedule_rrule": "DTSTART:20250101T000000\nRRULE:FREQ=DAILY",
        "schedule_rrule_time": "09:00:00",
    }  # fmt: skip


def _exports(level: str, base: str) -> None:
    async def create(s: Scene) -> tuple[str, Any, dict]:
        return s.real(f"{base}/scheduled_exports/"), export_body(level, "New"), await s.bearer()

    def one(method: str, body: Any) -> None:
        async def run(s: Scene) -> tuple[str, Any, dict]:
            export = await s.scheduled_export(level)
            url = s.real(f"{base}/scheduled_exports/{export['id']}/")
            return url, body, await s.bearer()

        CASES[(method, f"{base}/scheduled_exports/{{id}}/")] = run

    CASES[("POST", f"{base}/scheduled_exports/")] = create
    one("PUT", export_body(level, "Renamed"))
    one("PATCH", {"mail_subject": "Patched"})
    one("DELETE", None)


_exports("event", E)
_exports("organizer", O)


@case("DELETE", f"{O}/teams/{{team}}/members/{{id}}/")
async def _member_delete(s: Scene) -> tuple[str, Any]:
    user = await s.factory.user("member@example.org")
    team = await s.factory.team(s.world.org, members=[user])
    return s.real(f"{O}/teams/{team.id}/members/{user.id}/"), None


# -- seating plans and seats --------------------------------------------------------------------
crud(f"{O}/seatingplans", Scene.seating_plan, const({"name": "Arena", "layout": layout()}),
     const({"name": "Hall 2", "layout": layout(name="Hall 2")}),
     const({"name": "Big hall"}))  # fmt: skip


def _seats(prefix: str, subevent: bool) -> None:
    """The seat routes under ``prefix`` (the event's, or a date's of the series)."""

    def bulk(method: str, action: str) -> None:
        async def run(s: Scene) -> tuple[str, Any]:
            make = s.blocked_seats if action == "bulk_unblock" else s.seats
            base, seats = await make(subevent)
            return base + f"{action}/", {"ids": [seat["id"] for seat in seats[:3]]}

        CASES[(method, f"{prefix}/{action}/")] = run

    def one(method: str) -> None:
        async def run(s: Scene) -> tuple[str, Any]:
            base, seats = await s.seats(subevent)
            return base + f"{seats[0]['id']}/", {"blocked": True}

        CASES[(method, f"{prefix}/{{id}}/")] = run

    for method in ("POST", "PATCH"):
        bulk(method, "bulk_block")
        bulk(method, "bulk_unblock")
    one("PATCH")
    one("PUT")


_seats(f"{E}/seats", subevent=False)
_seats(f"{E}/subevents/{{subevent_id}}/seats", subevent=True)


@case("POST", f"{O}/webhooks/{{id}}/calls/{{call}}/redeliver/")
async def _redeliver(s: Scene) -> tuple[str, Any]:
    hook, call = await s.webhook_call()
    return s.real(f"{O}/webhooks/{hook['id']}/calls/{call}/redeliver/"), None


@case("POST", f"{E}/shredders/shred/{{id1}}/{{id2}}/")
async def _shred(s: Scene) -> tuple[str, Any]:
    return await s.shredder_export(), None
