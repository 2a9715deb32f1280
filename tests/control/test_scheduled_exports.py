"""Scheduled exports in the back office: scheduled from the exporter's own fields, changed and
deleted through the API's handlers (its messages by the fields, input kept)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from admit.models import ScheduledExport
from tests.control.conftest import sign_in
from tests.control.test_catalog_edit import _count, _token

RULE = "DTSTART:20300101T000000\nRRULE:FREQ=DAILY"
FORM = {"mail_subject": "Orders", "mail_template": "Attached.", "schedule_rrule": RULE,
        "schedule_rrule_time": "07:30", "locale": "en", "x-_format": "xlsx"}  # fmt: skip


async def test_event_export_scheduled_edited_deleted(web, people, factory, shop):
    await sign_in(web, factory, people["boss"])
    exports = shop.base + "exports/"
    page = await web.get(exports)
    assert f'href="{exports}scheduled/new?exporter=orderlist"' in page.text
    choose = await web.get(exports + "scheduled/new")
    assert choose.status_code == 200 and 'name="exporter"' in choose.text
    new = await web.get(exports + "scheduled/new?exporter=orderlist")
    assert new.status_code == 200 and 'name="x-_format"' in new.text
    token = await _token(web, exports + "scheduled/new?exporter=orderlist")
    bad = await web.post(
        exports + "scheduled/new",
        data={
            "csrf_token": token,
            "export_identifier": "orderlist",
            **FORM,
            "schedule_rrule_time": "25:99",
            "mail_additional_recipients": "not an address",
        },
    )
    assert bad.status_code == 400
    for name in ("schedule_rrule_time", "mail_additional_recipients"):
        assert f'id="f-{name}-error"' in bad.text, name
    assert 'value="25:99"' in bad.text and 'name="x-_format"' in bad.text
    wrong = await web.post(
        exports + "scheduled/new",
        data={"csrf_token": token, "export_identifier": "orderlist", **FORM, "x-_format": "pdf"},
    )
    assert wrong.status_code == 400 and 'id="f-x-_format-error"' in wrong.text
    rule = await web.post(exports + "scheduled/new", data={
        "csrf_token": token, "export_identifier": "orderlist", **FORM,
        "schedule_rrule": "DTSTART:20300101T000000\nRRULE:FREQ=SOMETIMES"})  # fmt: skip
    assert rule.status_code == 400 and 'id="f-schedule_rrule-error"' in rule.text
    assert "RRULE:FREQ=SOMETIMES</textarea>" in rule.text
    assert await _count(factory, ScheduledExport) == 0
    unknown = await web.post(exports + "scheduled/new", data={
        "csrf_token": token, "export_identifier": "nothing", **FORM})  # fmt: skip
    assert unknown.status_code == 400 and "Choose one of the exports" in unknown.text
    good = await web.post(exports + "scheduled/new", data={
        "csrf_token": token, "export_identifier": "orderlist", **FORM,
        "x-paid_only": "1"})  # fmt: skip
    assert good.status_code == 303, [x for x in good.text.splitlines() if "error" in x]
    async with factory.sessionmaker() as session:
        made = (await session.scalars(select(ScheduledExport))).one()
        assert made.export_identifier == "orderlist" and made.schedule_rrule_time == dt.time(7, 30)
        assert made.export_form_data["_format"] == "xlsx" and made.export_form_data["paid_only"]
    url = good.headers["location"]
    assert url == f"{exports}scheduled/{made.id}/"
    page = await web.get(url)
    assert 'value="07:30"' in page.text and "boss@example.org" in page.text
    assert f'href="{url}"' in (await web.get(exports)).text
    saved = await web.post(url, data={"csrf_token": token, **FORM, "mail_subject": "Daily"})
    assert saved.status_code == 303, saved.text[saved.text.find("<main") :][:2000]
    async with factory.sessionmaker() as session:
        made = (await session.scalars(select(ScheduledExport))).one()
        assert made.mail_subject == "Daily" and not made.export_form_data.get("paid_only")
    blank = await web.post(url, data={"csrf_token": token, **FORM, "mail_subject": " "})
    assert blank.status_code == 400 and 'id="f-mail_subject-error"' in blank.text
    # another user of the organizer without the settings permission does not see it
    await sign_in(web, factory, people["reader"])
    assert (await web.get(url)).status_code == 404
    await sign_in(web, factory, people["boss"])
    token = await _token(web, url + "delete")
    gone = await web.post(url + "delete", data={"csrf_token": token})
    assert gone.status_code == 303 and gone.headers["location"] == exports
    assert await _count(factory, ScheduledExport) == 0


async def test_organizer_export_scheduled_with_its_time_zone(web, people, factory, shop):
    await sign_in(web, factory, people["boss"])
    exports = "/control/organizer/acme/exports/"
    token = await _token(web, exports + "scheduled/new?exporter=giftcardlist")
    form = {"csrf_token": token, "export_identifier": "giftcardlist", **FORM, "x-_format": "csv"}
    bad = await web.post(exports + "scheduled/new", data={**form, "timezone": "Mars/Olympus"})
    assert bad.status_code == 400 and 'id="f-timezone-error"' in bad.text
    good = await web.post(exports + "scheduled/new", data={**form, "timezone": "Europe/Berlin"})
    assert good.status_code == 303, [x for x in good.text.splitlines() if "error" in x]
    async with factory.sessionmaker() as session:
        made = (await session.scalars(select(ScheduledExport))).one()
        assert made.timezone == "Europe/Berlin" and made.event_id is None
