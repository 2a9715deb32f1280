"""The waiting-list voucher mail: the code and a link that opens the shop with the voucher
applied, in the entry's language, for a voucher sent by hand and by the automatic assignment."""

from __future__ import annotations

from sqlalchemy import select

from admit.db import utcnow
from admit.models import OutgoingMail
from admit.waitinglist.auto import assign_all
from tests.factories import auth
from tests.shop import helpers as h
from tests.vouchers.helpers import ENTRIES, QUOTAS, SETTINGS


async def _mails(factory) -> list[OutgoingMail]:
    async with factory.sessionmaker() as session:
        return list((await session.scalars(select(OutgoingMail).order_by(OutgoingMail.id))).all())


async def test_send_voucher_mails_the_code_and_a_link_that_applies_it(client, world, factory):
    shop = await h.setup(factory, world, size=0, waiting_list_enabled=True)
    body = {"item": shop.ticket.id, "email": "wait@example.org", "name": "Ada", "locale": "en"}
    entry = (await client.post(ENTRIES, json=body, headers=auth(world.admin))).json()
    german = {**body, "email": "warte@example.org", "name": "Grete", "locale": "de"}
    other = (await client.post(ENTRIES, json=german, headers=auth(world.admin))).json()
    await client.patch(f"{QUOTAS}{shop.quota.id}/", json={"size": 2}, headers=auth(world.admin))
    for one in (entry, other):
        r = await client.post(f"{ENTRIES}{one['id']}/send_voucher/", headers=auth(world.admin))
        assert r.status_code == 204, r.text
    english, deutsch = await _mails(factory)
    front = f"http://testserver/{world.org.slug}/{world.event.slug}/?voucher="
    assert english.to == ["wait@example.org"]
    assert english.subject.startswith("You have been selected from the waiting list")
    assert "Hello Ada," in english.body and front in english.body and "Ticket" in english.body
    code = english.body.split("?voucher=")[1].split()[0]
    assert f"\n    {code}\n" in english.body
    assert f'href="{front}{code}"' in english.html
    assert deutsch.to == ["warte@example.org"]
    assert "Warteliste" in deutsch.subject and "Guten Tag Grete," in deutsch.body
    assert "Gutscheincode" in deutsch.body and "Gutschein öffnen" in deutsch.html
    dcode = deutsch.body.split("?voucher=")[1].split()[0]
    assert dcode != code and f"{front}{dcode}" in deutsch.body
    # The link works: the shop's front page opens with the voucher, the reserved ticket offered.
    page = await client.get(f"/{world.org.slug}/{world.event.slug}/?voucher={code}")
    assert page.status_code == 200 and f'value="{code}"' in page.text
    r = await h.cart(client, world, {"item": shop.ticket.id}, voucher=code)
    assert r.status_code == 201, r.text


async def test_automatic_assignment_mails_with_the_configured_base_url(
    client, world, factory, clean_app
):
    shop = await h.setup(factory, world, size=0, waiting_list_enabled=True)
    body = {"item": shop.ticket.id, "email": "auto@example.org", "locale": "de"}
    assert (await client.post(ENTRIES, json=body, headers=auth(world.admin))).status_code == 201
    await client.patch(f"{QUOTAS}{shop.quota.id}/", json={"size": 1}, headers=auth(world.admin))
    r = await client.patch(SETTINGS, json={"auto_assign": True}, headers=auth(world.admin))
    assert r.status_code == 200, r.text
    async with clean_app.state.db.sessionmaker() as session:
        assert await assign_all(session, utcnow(), "https://tickets.example.org/") == 1
    [mail] = await _mails(factory)
    assert mail.to == ["auto@example.org"] and "Guten Tag," in mail.body
    link = f"https://tickets.example.org/{world.org.slug}/{world.event.slug}/?voucher="
    assert link in mail.body and link in mail.html
    async with clean_app.state.db.sessionmaker() as session:
        assert await assign_all(session, utcnow()) == 0
