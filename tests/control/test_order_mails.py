"""The order page's mails: every mail queued about an order (placed, link sent again, paid or
canceled through the job that writes them) names it in the outbox and is listed on that
order's page only, with its recipient, subject and delivery status."""

from __future__ import annotations

from sqlalchemy import select, update

from admit.models import Job, Order, OutgoingMail
from admit.shop.buyer_mails import KIND
from tests.control.conftest import E, _post, sign_in
from tests.mail.conftest import settle
from tests.oauth.helpers import csrf


def _mails(page: str) -> str:
    return page[page.index(">Mails</h2>") :].split("<h2", 1)[0]


async def test_mails_of_an_order_are_on_its_page_only(web, api, people, factory, shop):
    body = {"email": "dee@example.org", "send_email": True,
            "positions": [{"item": shop.item, "attendee_name": "Dee"}]}  # fmt: skip
    placed = await _post(api, shop.token, f"{E}/orders/", body)
    await sign_in(web, factory, people["boss"])
    url = f"{shop.base}orders/{placed['code']}/"
    token = csrf((await web.get(url)).text)
    resent = await web.post(url + "resend", data={"csrf_token": token})
    assert resent.status_code == 303
    async with factory.sessionmaker() as session:
        order_id = await session.scalar(select(Order.id).where(Order.code == placed["code"]))
        rows = (await session.execute(select(OutgoingMail.order_id, OutgoingMail.to))).all()
        assert rows == [(order_id, ["dee@example.org"])] * 2
        first = await session.scalar(select(OutgoingMail.id).order_by(OutgoingMail.id))
        await session.execute(
            update(OutgoingMail).where(OutgoingMail.id == first).values(status="failed",
                                                                       error="550 no such user")
        )  # fmt: skip
        await session.commit()
    mails = _mails((await web.get(url)).text)
    assert mails.count("dee@example.org") == 2
    assert mails.count(f"Your order: {placed['code']}") == 2
    assert "queued" in mails and "failed" in mails and "550 no such user" in mails
    other = _mails((await web.get(f"{shop.base}orders/{shop.orders[0]['code']}/")).text)
    assert "dee@example.org" not in other and "No mail was sent about this order." in other
    await sign_in(web, factory, people["nobody"])
    assert (await web.get(url)).status_code == 403


async def test_the_canceled_mail_written_by_its_job_names_the_order(
    web, people, factory, shop, background
):
    code = shop.orders[1]["code"]  # pending
    await sign_in(web, factory, people["boss"])
    url = f"{shop.base}orders/{code}/"
    token = csrf((await web.get(url)).text)
    canceled = await web.post(url + "cancel", data={"csrf_token": token, "send_email": "1"})
    assert canceled.status_code == 303
    async with factory.sessionmaker() as session:
        [job] = await session.scalars(select(Job.id).where(Job.kind == KIND))
    done = await settle(web._transport.app, job)
    assert done.status == "finished", done.message
    mails = _mails((await web.get(url)).text)
    assert "bob@example.org" in mails and code in mails
    assert "bob@example.org" not in _mails(
        (await web.get(f"{shop.base}orders/{shop.orders[2]['code']}/")).text
    )
