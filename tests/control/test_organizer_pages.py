"""The back office's export, device, webhook, team, gift card and customer pages: each form
runs the API's own handler, so its refusals appear by the fields and what it stores is what
the API stores; secrets are shown once; an export's job belongs to the user who started it."""

from __future__ import annotations

import asyncio
import io
import json
import time

import segno
from sqlalchemy import select

from admit.models import Device, GiftCard, Webhook, WebhookCall
from tests.control.conftest import sign_in
from tests.control.test_catalog_edit import _token
from tests.oauth.helpers import csrf

ORG = "/control/organizer/acme/"


async def _finished(web, progress: str, background) -> dict:
    """The job's JSON once it stopped waiting and running (the page's script polls alike)."""
    deadline = time.monotonic() + 60
    while True:
        await background.engine.broker.wait_all()
        status = (await web.get(progress + "status")).json()
        if status["status"] not in ("waiting", "running") or time.monotonic() > deadline:
            return status
        await asyncio.sleep(0.05)


async def test_exports_form_from_input_parameters_progress_and_download(
    web, people, factory, shop, background
):
    await sign_in(web, factory, people["boss"])
    page = await web.get(shop.base + "exports/")
    assert page.status_code == 200
    # generated from the descriptors: a choice is a select, a list is chosen by its name
    assert 'id="orderlist-_format"' in page.text and 'value="orders:semicolon"' in page.text
    assert f'<option value="{shop.checkin_list}">Entrance</option>' in page.text
    assert 'type="checkbox" value="1" id="orderlist-paid_only"' in page.text
    assert 'id="orderlist-date_from" name="date_from"' in page.text
    token = await _token(web, shop.base + "exports/")
    bad = await web.post(shop.base + "exports/checkinlist/run",
                         data={"csrf_token": token, "_format": "csv"})  # fmt: skip
    assert bad.status_code == 400 and 'id="checkinlist-list-error"' in bad.text
    form = {"csrf_token": token, "_format": "xlsx", "paid_only": "1"}
    started = await web.post(shop.base + "exports/orderlist/run", data=form)
    assert started.status_code == 303, started.text[started.text.find("<main") :][:3000]
    progress = started.headers["location"]
    assert progress.startswith(shop.base + "exports/orderlist/")
    status = await _finished(web, progress, background)
    assert status["status"] == "finished" and status["download"] == progress + "download"
    done = await web.get(progress)
    assert 'id="export-download"' in done.text and "exports.js" not in done.text
    file = await web.get(progress + "download")
    assert file.status_code == 200 and file.content[:2] == b"PK"  # an xlsx (zip) file
    assert "spreadsheetml" in file.headers["content-type"]
    # the job is its owner's: another user with the same permissions finds nothing
    await sign_in(web, factory, people["reader"])
    assert (await web.get(progress)).status_code == 404
    assert (await web.get(progress + "download")).status_code == 404
    wrong = progress.rstrip("/").rsplit("/", 1)[0] + "/not-the-secret/"
    await sign_in(web, factory, people["boss"])
    assert (await web.get(wrong)).status_code == 404


async def test_progress_page_while_waiting_refreshes_without_script(web, people, factory, shop):
    await sign_in(web, factory, people["boss"])
    token = await _token(web, ORG + "exports/")
    started = await web.post(ORG + "exports/giftcardlist/run",
                             data={"csrf_token": token, "_format": "csv"})  # fmt: skip
    assert started.status_code == 303, started.text[started.text.find("<main") :][:3000]
    page = await web.get(started.headers["location"])  # no job engine here: still waiting
    assert page.status_code == 200 and "<progress" in page.text
    assert '<noscript><meta http-equiv="refresh" content="2"></noscript>' in page.text
    assert '<script src="/control/static/exports.js" defer></script>' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "unsafe-inline" not in page.headers["content-security-policy"]
    status = (await web.get(started.headers["location"] + "status")).json()
    assert status == {"status": "waiting", "percentage": 0, "message": None, "download": None}
    early = await web.get(started.headers["location"] + "download")
    assert early.status_code == 303 and early.headers["location"] == started.headers["location"]


async def test_device_created_with_pairing_qr_code_then_revoked(web, people, factory, shop):
    await sign_in(web, factory, people["boss"])
    token = await _token(web, ORG + "devices/new")
    bad = await web.post(ORG + "devices/new", data={"csrf_token": token, "name": " ",
                                                  "security_profile": "pretixscan"})  # fmt: skip
    assert bad.status_code == 400 and 'id="f-name-error"' in bad.text
    made = await web.post(ORG + "devices/new", data={"csrf_token": token, "name": "Door",
                          "all_events": "1", "security_profile": "pretixscan"})  # fmt: skip
    assert made.status_code == 303, made.text[:1500]
    url = made.headers["location"]
    async with factory.sessionmaker() as session:
        device = (await session.scalars(select(Device))).one()
    assert url == f"{ORG}devices/{device.device_id}/"
    page = await web.get(url)
    assert f'src="{url}qr.svg"' in page.text and device.initialization_token in page.text
    svg = await web.get(url + "qr.svg")
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    payload = {"handshake_version": 1, "url": "http://127.0.0.1",
               "token": device.initialization_token}  # fmt: skip
    expected = io.BytesIO()
    segno.make(json.dumps(payload, separators=(",", ":")), error="m", micro=False).save(
        expected, kind="svg", scale=6, border=2, title="Pairing QR code"
    )
    assert svg.content == expected.getvalue()
    revoked = await web.post(url + "revoke", data={"csrf_token": token})
    assert revoked.status_code == 303
    async with factory.sessionmaker() as session:
        assert (await session.scalars(select(Device.revoked))).one() is True
    after = await web.get(url)
    assert "revoked" in after.text and "qr.svg" not in after.text
    assert (await web.get(url + "qr.svg")).status_code == 404


async def test_webhook_secret_shown_once_errors_by_field_and_redeliver(web, people, factory, shop):
    await sign_in(web, factory, people["boss"])
    token = await _token(web, ORG + "webhooks/new")
    form = {
        "csrf_token": token,
        "all_events": "1",
        "enabled": "1",
        "action_types": "service.event.order.paid",
    }
    bad = await web.post(ORG + "webhooks/new", data={**form, "target_url": "ftp://x"})
    assert bad.status_code == 400 and 'id="f-target_url-error"' in bad.text
    assert 'value="ftp://x"' in bad.text
    made = await web.post(ORG + "webhooks/new",
                          data={**form, "target_url": "https://93.184.216.34/hook"})  # fmt: skip
    assert made.status_code == 200, made.text[:1500]
    async with factory.sessionmaker() as session:
        hook = (await session.scalars(select(Webhook))).one()
        call = WebhookCall(webhook_id=hook.id, source="notification", source_id=1,
                           action="service.event.order.paid", status="failed")  # fmt: skip
        session.add(call)
        await session.commit()
    assert f'id="webhook-secret">{hook.secret}<' in made.text
    page = await web.get(f"{ORG}webhooks/{hook.id}/")
    assert hook.secret not in page.text and "Send again" in page.text
    again = await web.post(f"{ORG}webhooks/{hook.id}/calls/{call.id}/redeliver",
                           data={"csrf_token": token})  # fmt: skip
    assert again.status_code == 303
    async with factory.sessionmaker() as session:
        copy = (await session.scalars(select(WebhookCall).where(WebhookCall.id != call.id))).one()
    assert copy.redelivery_of == call.id and copy.status == "pending"


async def test_team_token_shown_once_and_it_works(web, api, people, factory, shop):
    await sign_in(web, factory, people["boss"])
    token = await _token(web, ORG + "teams/new")
    form = {"csrf_token": token, "name": "Door staff", "all_events": "1",
            "limit_event_permissions": "event.orders:read"}  # fmt: skip
    made = await web.post(ORG + "teams/new", data=form)
    assert made.status_code == 303, made.text[:1500]
    url = made.headers["location"]
    invited = await web.post(url + "invites/new", data={"csrf_token": token, "email": "no-at"})
    assert invited.status_code == 400 and 'id="invite-email-error"' in invited.text
    assert 'id="invite-email" name="email" type="email" value="no-at"' in invited.text
    long_name = "n" * 191  # past the API's 190: refused, the typed name kept in its field
    refused = await web.post(url + "tokens/new", data={"csrf_token": token, "name": long_name})
    assert refused.status_code == 400 and 'id="token-name-error"' in refused.text
    assert f'id="token-name" name="name" value="{long_name}"' in refused.text
    created = await web.post(url + "tokens/new", data={"csrf_token": token, "name": "scanner"})
    assert created.status_code == 200
    secret = created.text.split('id="new-token">', 1)[1].split("<", 1)[0]
    listing = await api.get("/api/v1/organizers/acme/events/summit/orders/",
                            headers={"Authorization": f"Token {secret}"})  # fmt: skip
    assert listing.status_code == 200 and listing.json()["count"] == 3
    assert secret not in (await web.get(url)).text


async def test_gift_card_created_searched_and_booked(web, people, factory, shop):
    await sign_in(web, factory, people["boss"])
    token = await _token(web, ORG + "giftcards/new")
    made = await web.post(ORG + "giftcards/new", data={"csrf_token": token, "value": "30.00",
                          "currency": "EUR", "secret": "GIFT-CARD-1"})  # fmt: skip
    assert made.status_code == 303, made.text[:1500]
    url = made.headers["location"]
    short = await web.post(url + "transact", data={"csrf_token": token, "value": "-50.00"})
    assert short.status_code == 400, short.text
    assert 'id="f-value-error"' in short.text, short.text[short.text.find("<main") :]
    booked = await web.post(url + "transact", data={"csrf_token": token, "value": "-12.50",
                            "text": "Coffee"})  # fmt: skip
    assert booked.status_code == 303
    async with factory.sessionmaker() as session:
        assert str((await session.scalars(select(GiftCard.value))).one()) == "17.50"
    page = await web.get(url)
    assert "Coffee" in page.text and "-12.50" in page.text and "30.00" in page.text
    found = await web.get(ORG + "giftcards/?search=gift-card-1")
    assert "GIFT-CARD-1" in found.text and "1 card." in found.text
    assert "0 cards." in (await web.get(ORG + "giftcards/?search=nothing")).text
    await sign_in(web, factory, people["reader"])
    assert (await web.get(ORG + "giftcards/")).status_code == 403


async def test_customers_searched_by_email(web, api, people, factory, shop):
    body = {"email": "kim@example.org"}
    made = await api.post("/api/v1/organizers/acme/customers/", json=body,
                          headers={"Authorization": f"Token {shop.token}"})  # fmt: skip
    assert made.status_code == 201, made.text
    await sign_in(web, factory, people["boss"])
    page = await web.get(ORG + "customers/?search=KIM@example.org")
    assert page.status_code == 200 and "kim@example.org" in page.text and "1 customer." in page.text
    assert "0 customers." in (await web.get(ORG + "customers/?search=zz@example.org")).text


async def _rows_containing(factory, text: str) -> list[str]:
    """The tables with a row whose any column, as text, contains ``text``."""
    from admit.db import Base

    hits = []
    async with factory.sessionmaker() as session:
        for table in Base.metadata.sorted_tables:
            for row in (await session.execute(table.select())).all():
                if any(text in str(value) for value in row):
                    hits.append(table.name)
    return hits


async def test_secrets_shown_once_are_stored_only_as_needed_and_never_logged(
    web, people, factory, shop, caplog
):
    """A team token is kept as its hash only: no table holds it, no log line carries it. A
    webhook's signing secret must stay readable to sign the calls: its own row only."""
    caplog.set_level("DEBUG", logger="admit")  # the app's own logs (SQL echo is off by default)
    await sign_in(web, factory, people["boss"])
    token = csrf((await web.get(ORG + "teams/new")).text)
    made = await web.post(ORG + "teams/new", data={"csrf_token": token, "name": "Keys"})
    assert made.status_code == 303, made.text[:800]
    created = await web.post(made.headers["location"] + "tokens/new",
                             data={"csrf_token": token, "name": "scanner"})  # fmt: skip
    secret = created.text.split('id="new-token">', 1)[1].split("<", 1)[0]
    assert len(secret) >= 32
    hook = await web.post(ORG + "webhooks/new", data={
        "csrf_token": token, "target_url": "https://93.184.216.34/hook", "all_events": "1",
        "action_types": "service.event.order.placed"})  # fmt: skip
    signing = hook.text.split('id="webhook-secret">', 1)[1].split("<", 1)[0]
    assert hook.status_code == 200 and len(signing) >= 32
    assert await _rows_containing(factory, secret) == []
    assert await _rows_containing(factory, signing) == ["webhooks"]
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "tokens/new" in logged  # the log was captured
    assert secret not in logged and signing not in logged
