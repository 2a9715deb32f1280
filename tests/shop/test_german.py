"""The shop in German: offered when the event's locales include ``de``, picked with the
switcher (kept in the session), stored as the order's locale, and the buyer's mail in German.
English stays the default, and an event without ``de`` shows no switcher and ignores it."""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import select

import admit.shop
from admit.models import Order, OutgoingMail
from admit.shop.i18n import GERMAN
from tests.oauth.helpers import csrf
from tests.shop import helpers as h


async def test_a_buyer_picks_german_and_gets_a_german_mail(client, world, factory):
    shop = await h.setup(factory, world, locales=["en", "de"], terms_url="https://acme.example/t")
    front = f"/{world.org.slug}/{world.event.slug}/"
    english = (await client.get(front)).text
    assert '<html lang="en">' in english and "Add to cart" in english
    assert f'href="{front}?lang=de"' in english  # the switcher
    german = (await client.get(f"{front}?lang=de")).text
    assert '<html lang="de">' in german and "In den Warenkorb" in german
    assert "Add to cart" not in german
    token = csrf(german)
    r = await client.post(
        f"{front}cart/add", data={"csrf_token": token, f"qty_{shop.ticket.id}": "1"}
    )
    assert r.status_code == 303
    page = (await client.get(front)).text  # the choice is kept
    assert "Ihr Warenkorb" in page and "Zum Warenkorb hinzugefügt" in page
    form = (await client.get(f"{front}checkout/")).text
    assert "Zahlungspflichtig bestellen" in form and "Rechnungsadresse" in form
    data = {
        "csrf_token": token,
        "email": "eva@example.de",
        "email_repeat": "eva@example.com",
        "payment": "banktransfer",
        "accept_terms": "yes",
    }
    r = await client.post(f"{front}checkout/", data=data)
    assert r.status_code == 400
    assert "E-Mail (wiederholen): Die beiden E-Mail-Adressen stimmen nicht" in r.text
    r = await client.post(f"{front}checkout/", data={**data, "email_repeat": "eva@example.de"})
    assert r.status_code == 303, r.text
    order_page = (await client.get(r.headers["location"])).text
    assert "Zahlung ausstehend" in order_page and "Ihre Bestellung" in order_page
    async with factory.sessionmaker() as session:
        order = await session.scalar(select(Order))
        mail = await session.scalar(select(OutgoingMail))
    assert order.locale == "de"
    assert "bitte bezahlen" in mail.subject and "Guten Tag" in mail.body
    assert '<html lang="de">' in mail.html and h.IBAN in mail.body


async def test_no_german_unless_the_event_offers_it(client, world, factory):
    await h.setup(factory, world)
    front = f"/{world.org.slug}/{world.event.slug}/"
    page = (await client.get(f"{front}?lang=de")).text
    assert '<html lang="en">' in page and "Add to cart" in page and "?lang=" not in page


def test_every_text_the_templates_translate_is_in_the_catalogue():
    folder = Path(admit.shop.__file__).parent / "templates"
    keys = set()
    for template in folder.glob("*.html"):
        found = re.findall(r'_\("((?:[^"\\]|\\.)*)"\)', template.read_text())
        keys |= {k.replace('\\"', '"') for k in found}
    assert len(keys) > 80
    assert sorted(keys - GERMAN.keys()) == []
    assert all(text.strip() for text in GERMAN.values())
