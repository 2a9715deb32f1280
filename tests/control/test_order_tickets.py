"""The order's tickets from its page: the links only where the API's download gives a ticket,
the waiting page while the PDF is drawn, then the PDF itself; the reader's permission."""

from __future__ import annotations

from tests.control.conftest import sign_in
from tests.tickets import helpers as h


async def test_links_only_for_orders_and_tickets_that_have_them(web, factory, people, shop):
    await sign_in(web, factory, people["reader"])
    paid, pending = shop.orders[0], shop.orders[1]
    page = await web.get(f"{shop.base}orders/{paid['code']}/")
    assert page.status_code == 200
    position = paid["positions"][0]["id"]
    assert f'orders/{paid["code"]}/tickets.pdf"' in page.text
    assert f'orders/{paid["code"]}/tickets/{position}.pdf"' in page.text
    unpaid = await web.get(f"{shop.base}orders/{pending['code']}/")
    assert "tickets.pdf" not in unpaid.text and "/tickets/" not in unpaid.text
    refused = await web.get(f"{shop.base}orders/{pending['code']}/tickets.pdf")
    assert refused.status_code == 404 and "not paid yet" in refused.text
    other = pending["positions"][0]["id"]
    wrong = await web.get(f"{shop.base}orders/{paid['code']}/tickets/{other}.pdf")
    assert wrong.status_code == 404 and "no such ticket" in wrong.text
    for junk in ("x", "-1", "9" * 30):
        assert (
            await web.get(f"{shop.base}orders/{paid['code']}/tickets/{junk}.pdf")
        ).status_code == 404


async def test_the_pdf_after_the_waiting_page(web, factory, people, shop):
    app = web._transport.app
    await sign_in(web, factory, people["reader"])
    paid = shop.orders[0]
    base = f"{shop.base}orders/{paid['code']}/"
    for link in (base + "tickets.pdf", base + f"tickets/{paid['positions'][0]['id']}.pdf"):
        waiting = await web.get(link)
        assert waiting.status_code == 200 and waiting.headers["content-type"].startswith(
            "text/html"
        )
        assert '<meta http-equiv="refresh" content="2">' in waiting.text
        assert (
            "Preparing the PDF" in waiting.text
            and "unsafe-inline" not in waiting.headers["content-security-policy"]
        )
        await h.run_waiting(app)
        ready = await web.get(link)
        assert ready.status_code == 200 and ready.headers["content-type"] == "application/pdf"
        assert "Ada Lovelace" in h.page_texts(ready.content)[0]
    await sign_in(web, factory, people["scanner"])
    assert (await web.get(f"{shop.base}orders/{paid['code']}/tickets.pdf")).status_code == 403
