"""Events in the back office: created empty or as a copy, edited, taken live, each through the
API's own handlers (its errors shown by the fields with the input kept)."""

from __future__ import annotations

from sqlalchemy import func, select

from admit.models import Event, Item, Notification, Quota
from tests.control.test_pages import _as
from tests.oauth.helpers import csrf

NEW = "/control/organizer/acme/events/new"


def settings_form(token: str, **fields: str) -> dict[str, str]:
    """The event settings page's form as the test event fills it, with ``fields`` added."""
    return {
        "csrf_token": token,
        "name": "Summit 2030",
        "date_from": "2030-06-01T09:00",
        "timezone": "UTC",
        "currency": "EUR",
        "payment_term_days": "10",
        "ticket_secret_generator": "random",
        **fields,
    }


async def _form(web, url: str) -> str:
    page = await web.get(url)
    assert page.status_code == 200, page.text[:500]
    return csrf(page.text)


async def test_create_empty_event_errors_by_field_then_created(web, people, factory, shop):
    await _as(web, people["boss"])
    organizer = await web.get("/control/organizer/acme/")
    assert 'href="/control/organizer/acme/events/new"' in organizer.text
    token = await _form(web, NEW)
    bad = await web.post(
        NEW,
        data={
            "csrf_token": token,
            "name": "Gala",
            "slug": "summit",
            "date_from": "2031-05-01T19:00",
            "timezone": "Mars/Base",
            "currency": "eur",
        },
    )
    assert bad.status_code == 400
    text = bad.text
    # the API's messages by their fields, what was typed kept
    assert 'id="f-currency-error"' in text and "three-letter" in text
    assert 'id="f-timezone-error"' in text and 'value="Mars/Base"' in text
    assert 'value="Gala"' in text
    async with factory.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(Event)) == 2
    good = await web.post(
        NEW,
        data={
            "csrf_token": token,
            "name": "Gala",
            "slug": "gala",
            "date_from": "2031-05-01T19:00",
            "timezone": "Europe/Berlin",
            "currency": "EUR",
        },
    )
    assert good.status_code == 303, good.text[:800]
    assert good.headers["location"] == "/control/event/acme/gala/settings/"
    async with factory.sessionmaker() as session:
        event = (await session.scalars(select(Event).where(Event.slug == "gala"))).one()
        assert event.timezone == "Europe/Berlin" and not event.live
        # 19:00 in Berlin (summer time) is 17:00 UTC
        assert event.date_from.hour == 17
        added = await session.scalar(
            select(func.count()).where(
                Notification.event_id == event.id, Notification.action == "service.event.added"
            )
        )
        assert added == 1


async def test_clone_copies_the_catalog(web, people, factory, shop):
    await _as(web, people["boss"])
    token = await _form(web, NEW)
    response = await web.post(
        NEW,
        data={
            "csrf_token": token,
            "name": "Summit 2031",
            "slug": "summit31",
            "date_from": "2031-05-01T09:00",
            "timezone": "UTC",
            "currency": "EUR",
            "clone_from": "summit",
        },
    )
    assert response.status_code == 303, response.text[:800]
    async with factory.sessionmaker() as session:
        event = (await session.scalars(select(Event).where(Event.slug == "summit31"))).one()
        assert await session.scalar(select(func.count()).where(Item.event_id == event.id)) == 1
        assert await session.scalar(select(func.count()).where(Quota.event_id == event.id)) == 1


async def test_settings_saved_and_refused_by_field(web, people, factory, shop):
    await _as(web, people["boss"])
    url = shop.base + "settings/"
    token = await _form(web, url)
    form = settings_form(token, payment_banktransfer_bank_details_sepa_iban="DE00 1234")
    bad = await web.post(url, data=form)
    assert bad.status_code == 400
    assert "Enter a valid IBAN." in bad.text and 'value="DE00 1234"' in bad.text
    form.update(
        payment_banktransfer_bank_details_sepa_iban="DE89370400440532013000",
        payment_banktransfer__enabled="1",
        plugins="banktransfer",
        frontpage_text="Welcome!",
    )
    good = await web.post(url, data=form)
    assert good.status_code == 303, good.text[:1500]
    async with factory.sessionmaker() as session:
        event = (await session.scalars(select(Event).where(Event.slug == "summit"))).one()
        assert event.plugins == ["banktransfer"]
        assert event.settings["payment_term_days"] == 10
        assert event.settings["frontpage_text"] == {"en": "Welcome!"}
    again = await web.get(url)
    assert "Welcome!" in again.text and 'value="DE89370400440532013000"' in again.text


async def test_go_live_lists_the_problems_then_goes_live(web, people, factory, shop):
    await _as(web, people["boss"])
    url = shop.base + "live/"
    page = await web.get(url)
    assert "have not enabled any payment methods" in page.text
    refused = await web.post(url, data={"csrf_token": csrf(page.text), "action": "live"})
    assert refused.status_code == 400 and "have not enabled any payment methods" in refused.text
    async with factory.sessionmaker() as session:
        event = (await session.scalars(select(Event).where(Event.slug == "summit"))).one()
        assert not event.live
        event.plugins = ["manualpayment"]
        event.settings = {**(event.settings or {}), "payment_manual__enabled": True}
        await session.commit()
    page = await web.get(url)
    assert "Nothing keeps the shop from going live" in page.text
    done = await web.post(url, data={"csrf_token": csrf(page.text), "action": "live"})
    assert done.status_code == 303
    test = await web.post(url, data={"csrf_token": csrf(page.text), "action": "test_on"})
    assert test.status_code == 303
    async with factory.sessionmaker() as session:
        event = (await session.scalars(select(Event).where(Event.slug == "summit"))).one()
        assert event.live and event.testmode
