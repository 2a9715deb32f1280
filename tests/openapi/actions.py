"""Scenarios for the operations no detail recipe reaches: order and money state changes,
check-in, seats, devices, jobs and their downloads, uploads, OAuth, the odd lists."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import os
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import text

from admit.auth.credentials import generate_token, hash_token
from admit.models import OAuthGrant, OAuthToken, WebhookCall, oauth_grant_organizers
from tests.conditional.recipes import E, Env, O
from tests.devices.helpers import device_auth, make_device
from tests.uploads.helpers import image_bytes, upload_id

Scenario = Callable[[Env], Awaitable[None]]
SCENARIOS: list[Scenario] = []


def scenario(func: Scenario) -> Scenario:
    SCENARIOS.append(func)
    return func


async def call(env: Env, method: str, url: str, body: Any = None, **params: Any) -> Any:
    json = body if body is not None or method in ("GET", "DELETE") else {}
    response = await env.client.request(method, url, json=json, headers=env.h, params=params)
    return response


async def ok(env: Env, method: str, url: str, body: Any = None, **params: Any) -> Any:
    response = await call(env, method, url, body, **params)
    assert 200 <= response.status_code < 300, (method, url, response.status_code, response.text)
    return response.json() if response.content else None


@scenario
async def order_states(env: Env) -> None:
    order = (await env.order(positions=2))["code"]
    url = f"{E}/orders/{order}/"
    await ok(env, "GET", f"{E}/orders/", status="n", ordering="-datetime", testmode="false")
    await ok(env, "GET", f"{O}/orders/", code=order)
    await ok(env, "GET", f"{E}/orderpositions/", ordering="positionid", order=order)
    await ok(env, "POST", f"{url}extend/", {"expires": "2031-01-01T10:00:00Z"})
    await ok(env, "POST", f"{url}mark_paid/")
    await ok(env, "POST", f"{url}mark_pending/")
    await ok(env, "POST", f"{url}mark_expired/")
    await ok(env, "POST", f"{url}regenerate_secrets/")
    await ok(env, "POST", f"{url}resend_link/")
    await ok(env, "POST", f"{url}mark_canceled/", {"send_email": False})
    await ok(env, "POST", f"{url}reactivate/")
    approval = await env.order(require_approval=True)
    await ok(env, "POST", f"{E}/orders/{approval['code']}/approve/")
    denied = await env.order(require_approval=True)
    await ok(env, "POST", f"{E}/orders/{denied['code']}/deny/", {"comment": "No"})
    await call(env, "POST", f"{E}/orders/", {"positions": []})
    await ok(env, "POST", f"{E}/orders/", {"email": "s@example.org", "simulate": True,
              "positions": [{"item": await env.item()}]})  # fmt: skip


@scenario
async def order_change_and_positions(env: Env) -> None:
    order = await env.order(positions=2)
    code = order["code"]
    first, second = (p["id"] for p in order["positions"])
    body = {"patch_positions": [{"position": first, "body": {"price": "12.00"}}]}
    await ok(env, "POST", f"{E}/orders/{code}/change/", body)
    log = {"source": "Kiosk", "type": "badge"}
    await ok(env, "POST", f"{E}/orderpositions/{first}/printlog/", log)
    await ok(env, "DELETE", f"{E}/orderpositions/{second}/")
    await ok(env, "GET", f"{E}/orderpositions/{first}/")


@scenario
async def payments_and_refunds(env: Env) -> None:
    order = await env.order(positions=2)
    base = f"{E}/orders/{order['code']}"
    paying = {"amount": order["total"], "provider": "manual"}
    other = await ok(env, "POST", f"{base}/payments/", paying)
    await ok(env, "POST", f"{base}/payments/{other['local_id']}/cancel/")
    payment = await ok(env, "POST", f"{base}/payments/", paying)
    pay = f"{base}/payments/{payment['local_id']}/"
    await ok(env, "GET", f"{base}/payments/")
    await ok(env, "POST", f"{pay}confirm/", {"force": True})
    await ok(env, "POST", f"{pay}refund/", {"amount": "1.00", "mark_canceled": False})
    refund_body = {"amount": "1.00", "payment": payment["local_id"], "provider": "manual",
                   "state": "created"}  # fmt: skip
    refund = await ok(env, "POST", f"{base}/refunds/", refund_body)
    await ok(env, "GET", f"{base}/refunds/")
    await ok(env, "POST", f"{base}/refunds/{refund['local_id']}/done/")
    second = await ok(env, "POST", f"{base}/refunds/", {**refund_body, "state": "external"})
    await ok(env, "POST", f"{base}/refunds/{second['local_id']}/process/", {"mark_canceled": False})
    third = await ok(env, "POST", f"{base}/refunds/", refund_body)
    await ok(env, "POST", f"{base}/refunds/{third['local_id']}/cancel/")


@scenario
async def checkin(env: Env) -> None:
    order = await env.order(status="p", payment_provider="manual")
    clist = await env.checkin_list()
    secret = order["positions"][0]["secret"]
    await ok(env, "GET", f"{E}/checkinlists/{clist}/status/")
    await ok(env, "GET", f"{E}/checkinlists/{clist}/positions/", ordering="-last_checked_in",
             expand="item")  # fmt: skip
    body = {"secret": secret, "lists": [clist], "nonce": "n1"}
    await ok(env, "POST", f"{O}/checkinrpc/redeem/", body)
    await call(env, "POST", f"{O}/checkinrpc/redeem/", {"secret": "unknown", "lists": [clist]})
    await call(env, "POST", f"{O}/checkinrpc/redeem/", body)
    await ok(env, "POST", f"{O}/checkinrpc/annul/", {"nonce": "n1", "lists": [clist]})
    await ok(env, "GET", f"{O}/checkinrpc/search/", list=clist, search=secret[:5])
    await ok(env, "GET", f"{E}/checkins/", successful="true")


@scenario
async def signed_secrets(env: Env) -> None:
    order = await env.order(status="p", payment_provider="manual", positions=2)
    position = order["positions"][0]["id"]
    await ok(env, "POST", f"{E}/orders/{order['code']}/regenerate_secrets/")
    await ok(env, "POST", f"{E}/orders/{order['code']}/change/",
             {"add_block": [{"position": position}]})  # fmt: skip
    await ok(env, "GET", f"{E}/revokedsecrets/", created_since="2020-01-01T00:00:00Z",
             ordering="secret")  # fmt: skip
    await ok(env, "GET", f"{E}/blockedsecrets/", updated_since="2020-01-01T00:00:00Z",
             blocked="true", ordering="-updated")  # fmt: skip
    clist = await env.checkin_list()
    body = {"error_reason": "revoked", "raw_barcode": "abc", "position": position}
    await ok(env, "POST", f"{E}/checkinlists/{clist}/failed_checkins/", body)
    await call(env, "POST", f"{E}/checkinlists/{clist}/failed_checkins/", {"error_reason": "x"})


@scenario
async def seats(env: Env) -> None:
    from tests.conditional.recipes import RECIPES

    url = await RECIPES["/events/{event}/seats/{id}/"].make(env)
    seat = int(url.rstrip("/").rsplit("/", 1)[1])
    for action in ("bulk_block", "bulk_unblock"):
        for method in ("POST", "PATCH"):
            await ok(env, method, f"{E}/seats/{action}/", {"ids": [seat]})
    sub_url = await RECIPES["/events/{event}/subevents/{subevent_id}/seats/{id}/"].make(env)
    sub_seat = int(sub_url.rstrip("/").rsplit("/", 1)[1])
    sub_base = sub_url.split("/seats/")[0]
    for action in ("bulk_block", "bulk_unblock"):
        for method in ("POST", "PATCH"):
            await ok(env, method, f"{sub_base}/seats/{action}/", {"ids": [sub_seat]})
    await ok(env, "GET", f"{E}/seats/", blocked="false")


@scenario
async def catalog_extras(env: Env) -> None:
    item = await env.item()
    quotas = await ok(env, "GET", f"{E}/quotas/", with_availability="true")
    await ok(env, "GET", f"{E}/quotas/{quotas['results'][0]['id']}/availability/")
    await ok(env, "POST", f"{E}/cartpositions/bulk_create/", [{"item": item, "price": "10.00"}])
    await ok(env, "POST", f"{E}/vouchers/batch_create/", [{"code": "BATCH1"}, {"code": "BATCH2"}])
    await ok(env, "GET", f"{E}/ticketlayoutitems/")
    await ok(env, "GET", f"{O}/subevents/")
    await ok(env, "GET", "/api/v1/organizers/")
    await ok(env, "POST", f"{E}/clone/", {"name": {"en": "Copy"}, "slug": "copy",
             "date_from": "2030-06-01T10:00:00Z"})  # fmt: skip
    channels = await ok(env, "GET", f"{O}/saleschannels/")
    await ok(env, "GET", f"{O}/saleschannels/{channels['results'][0]['identifier']}/")


@scenario
async def waiting_list(env: Env) -> None:
    item = await env.item(quota=0)
    body = {"email": "w@example.org", "item": item}
    entry = await ok(env, "POST", f"{E}/waitinglistentries/", body)
    await ok(env, "GET", f"{E}/waitinglist_settings/")
    await ok(env, "PATCH", f"{E}/waitinglist_settings/", {})
    current = await ok(env, "GET", f"{E}/waitinglist_settings/")
    await ok(env, "PUT", f"{E}/waitinglist_settings/", current)
    await ok(env, "GET", f"{E}/settings/")
    await ok(env, "PATCH", f"{E}/settings/", {"waiting_list_hours": 24, "locale": "en"})
    await env.sql(text("UPDATE quotas SET size = 5"))
    await ok(env, "POST", f"{E}/waitinglistentries/{entry['id']}/send_voucher/")


@scenario
async def customers_webhooks_giftcards(env: Env) -> None:
    customer = await ok(env, "POST", f"{O}/customers/", {"email": "c@example.org"})
    await ok(env, "POST", f"{O}/customers/{customer['identifier']}/anonymize/")
    hook = await ok(env, "POST", f"{O}/webhooks/", {"target_url": "https://example.org/h",
                    "action_types": ["service.event.order.placed"]})  # fmt: skip
    await ok(env, "POST", f"{O}/webhooks/{hook['id']}/rotate_secret/")
    async with env.factory.sessionmaker() as session:
        failed = WebhookCall(webhook_id=hook["id"], source="notification", source_id=1,
                             action="service.event.order.placed", status="failed")  # fmt: skip
        session.add(failed)
        await session.commit()
        call_id = failed.id
    await ok(env, "GET", f"{O}/webhooks/{hook['id']}/calls/", status="failed")
    await ok(env, "POST", f"{O}/webhooks/{hook['id']}/calls/{call_id}/redeliver/")
    card = await ok(env, "POST", f"{O}/giftcards/", {"value": "10.00", "currency": "EUR"})
    await ok(env, "POST", f"{O}/giftcards/{card['id']}/transact/", {"value": "2.00"})
    await ok(env, "GET", f"{O}/giftcards/{card['id']}/transactions/")


@scenario
async def devices(env: Env) -> None:
    created = await ok(env, "POST", f"{O}/devices/", {"name": "Door"})
    init = {"token": created["initialization_token"], "hardware_brand": "X",
            "hardware_model": "Y", "software_brand": "Z", "software_version": "1"}  # fmt: skip
    response = await env.client.post("/api/v1/device/initialize", json=init)
    assert response.status_code == 200, response.text
    token = response.json()["api_token"]
    h = device_auth(token)
    await env.client.get("/api/v1/device/info", headers=h)
    await env.client.post("/api/v1/device/update", json={"software_version": "2"}, headers=h)
    await env.client.get("/api/v1/device/eventselection", headers=h)
    rolled = await env.client.post("/api/v1/device/roll", headers=h)
    h = device_auth(rolled.json()["api_token"])
    await env.client.post("/api/v1/device/revoke", headers=h)
    await env.sql(text("UPDATE events SET live = :live"), live=True)
    await env.checkin_list()
    _, other = await make_device(env.factory, env.world.org)
    await env.client.get("/api/v1/device/eventselection", headers=device_auth(other),
                         params={"current_event": "summit"})  # fmt: skip


async def _download(env: Env, url: str, headers: dict[str, str] | None = None) -> Any:
    for _ in range(500):
        response = await env.client.get(url, headers=headers or env.h)
        if response.status_code != 409:
            return response
        await asyncio.sleep(0.02)
    raise AssertionError(f"{url} still running")


@scenario
async def exports_and_jobs(env: Env) -> None:
    await env.order()
    await ok(env, "GET", f"{E}/exporters/")
    await ok(env, "GET", f"{O}/exporters/")
    started = await ok(env, "POST", f"{E}/exporters/orderlist/run/", {"_format": "xlsx"})
    assert (await _download(env, started["download"])).status_code == 200
    started = await ok(env, "POST", f"{O}/exporters/orderlist/run/", {"_format": "xlsx"})
    assert (await _download(env, started["download"])).status_code == 200
    async with env.factory.sessionmaker() as session:
        uuid_, secret = (await session.execute(text("SELECT uuid, secret FROM jobs"))).first()
    await ok(env, "GET", f"{O}/jobs/{uuid_}/")
    assert (await _download(env, f"{O}/jobs/{uuid_}/download/{secret}/")).status_code == 200


@scenario
async def tickets(env: Env) -> None:
    order = await env.order(status="p", payment_provider="manual")
    await env.sql(text("UPDATE events SET plugins = :p"), p='["ticketoutputpdf"]')
    position = order["positions"][0]["id"]
    started = await ok(env, "POST", f"{E}/ticketpdfrenderer/render_batch/",
                       {"parts": [{"orderposition": position}]})  # fmt: skip
    assert (await _download(env, started["download"])).status_code == 200
    for url in (f"{E}/orders/{order['code']}/download/pdf/",
                f"{E}/orderpositions/{position}/download/pdf/"):  # fmt: skip
        response = await env.client.get(url, headers=env.h)
        if response.status_code in (200, 202, 409):
            await _download(env, url)


@scenario
async def shredders(env: Env) -> None:
    await env.sql(
        text("UPDATE events SET live = :live, date_from = :d, date_to = :d"),
        live=False,
        d=dt.datetime(2020, 1, 1, tzinfo=dt.UTC),
    )
    await ok(env, "GET", f"{E}/shredders/")
    started = await ok(env, "POST", f"{E}/shredders/export/", {"shredders": ["order_emails"]})
    response = await _download(env, started["download"])
    assert response.status_code == 200, response.text
    ids = started["download"].rstrip("/").split("/")[-2:]
    await call(env, "GET", f"{E}/shredders/status/{ids[0]}/{ids[1]}/")
    shred = await ok(env, "POST", f"{E}/shredders/shred/{ids[0]}/{ids[1]}/")
    assert (await _download(env, shred["status"])).status_code == 200


@scenario
async def uploads(env: Env) -> None:
    file_id = await upload_id(env.client, env.world.admin, image_bytes("PNG"),
                              content_type="image/png", filename="logo.png")  # fmt: skip
    item = await ok(
        env,
        "POST",
        f"{E}/items/",
        {"name": {"en": "Pic"}, "default_price": "1.00", "picture": file_id},
    )
    picture = item["picture"]
    assert picture, item
    await env.client.get(picture.removeprefix("http://testserver"))


@scenario
async def oauth(env: Env) -> None:
    from tests.oauth.helpers import bearer_token, make_app

    user = await env.factory.user()
    application = await make_app(env.factory)
    refresh = generate_token()
    async with env.factory.sessionmaker() as session:
        grant = OAuthGrant(application_id=application.id, user_id=user.id, scope="read")
        session.add(grant)
        await session.flush()
        await session.execute(
            oauth_grant_organizers.insert().values(grant_id=grant.id, organizer_id=env.world.org.id)
        )
        session.add(
            OAuthToken(
                grant_id=grant.id,
                access_hash=hash_token(generate_token()),
                refresh_hash=hash_token(refresh),
                scope="read",
                expires=dt.datetime.now(dt.UTC) + dt.timedelta(hours=1),
            )
        )
        await session.commit()
    basic = {"Authorization": "Basic " + base64.b64encode(
        f"{application.client_id}:{application.secret}".encode()).decode(),
        "Content-Type": "application/x-www-form-urlencoded"}  # fmt: skip
    insecure = os.environ.get("AUTHLIB_INSECURE_TRANSPORT")
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # the test server's URL is plain HTTP
    try:
        form = f"grant_type=refresh_token&refresh_token={refresh}"
        tokens = await env.client.post("/api/v1/oauth/token", content=form, headers=basic)
        assert tokens.status_code == 200, tokens.text
        await env.client.post("/api/v1/oauth/token", content="grant_type=nope", headers=basic)
        access = tokens.json()["access_token"]
        profile = await bearer_token(env.factory, application, user, [env.world.org])
        me = await env.client.get("/api/v1/me", headers={"Authorization": f"Bearer {profile}"})
        assert me.status_code == 200, me.text
        form = f"token={access}"
        await env.client.post("/api/v1/oauth/revoke_token", content=form, headers=basic)
        await env.client.get("/api/v1/oauth/revoke_token", params={"token": "x"},
                             headers={"Authorization": basic["Authorization"]})  # fmt: skip
    finally:
        if insecure is None:
            os.environ.pop("AUTHLIB_INSECURE_TRANSPORT", None)
        else:
            os.environ["AUTHLIB_INSECURE_TRANSPORT"] = insecure


@scenario
async def scheduled_exports(env: Env) -> None:
    from tests.conditional.recipes import RECIPES

    await RECIPES["/scheduled_exports/{id}/"].make(env)
    h = {"Authorization": f"Bearer {env.cache['bearer']}"}
    body = {
        "export_identifier": "orderlist",
        "schedule_rrule": "DTSTART:20250101T000000\nRRULE:FREQ=DAILY",
        "schedule_rrule_time": "06:00:00",
        "mail_subject": "Daily",
        "mail_template": "Attached.",
        "export_form_data": {"_format": "xlsx"},
    }
    for url in (f"{E}/scheduled_exports/", f"{O}/scheduled_exports/"):
        response = await env.client.post(url, json=body, headers=h)
        assert response.status_code == 201, response.text


@scenario
async def refusals(env: Env) -> None:
    """Every operation without credentials, with a token lacking every permission, and with
    a junk page: the refusals too must be documented answers."""
    from tests.idempotency.test_generated import _url
    from tests.test_access_generated import ROUTES

    for method, path, _access in ROUTES:
        url = _url(path, env.world)
        body = None if method in ("GET", "DELETE") else {}
        await env.client.request(method, url, json=body)
        nobody = {"Authorization": f"Token {env.world.nobody}"}
        await env.client.request(method, url, json=body, headers=nobody)
        if method == "GET":
            await env.client.request(method, url, headers=env.h, params={"page": "x"})


@scenario
async def invoices(env: Env) -> None:
    order = (await env.order(positions=2))["code"]
    invoice = await ok(env, "POST", f"{E}/orders/{order}/create_invoice/")
    await call(env, "POST", f"{E}/orders/{order}/create_invoice/")  # 400: exists already
    one = f"{E}/invoices/{invoice['number']}/"
    await ok(env, "GET", f"{E}/invoices/", is_cancellation="false", ordering="-date", order=order)
    await ok(env, "GET", f"{E}/invoices/", refers=invoice["number"], locale="en")
    await ok(env, "GET", f"{O}/invoices/", event="nope", ordering="nr")
    await ok(env, "GET", one)
    assert (await _download(env, f"{one}download/")).status_code == 200
    assert (await call(env, "GET", f"{one}ubl/")).status_code == 200
    await ok(env, "POST", f"{one}regenerate/")
    await ok(env, "POST", f"{one}reissue/")
    await call(env, "POST", f"{one}reissue/")  # 400: canceled already
