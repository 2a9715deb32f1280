"""``make run``'s demo event sells in its shop with nothing else set up: a regular ticket by
bank transfer through the headless checkout, its order page answering."""

from __future__ import annotations

from admit.bootstrap import load_demo


async def test_the_demo_shop_sells_a_ticket(client, clean_app):
    demo = await load_demo(clean_app.state.settings)
    base = f"/api/v1/public/organizers/{demo.organizer}/events/{demo.event}"
    info = (await client.get(f"{base}/")).json()
    assert info["shop_open"] is True
    assert "banktransfer" in [p["identifier"] for p in info["payment_providers"]]
    r = await client.post(f"{base}/carts/", json={"products": [{"item": demo.ticket_item}]})
    assert r.status_code == 201, r.text
    assert r.json()["total"] == "120.00"
    r = await client.post(
        f"{base}/checkout/",
        json={
            "cart_id": r.json()["cart_id"],
            "email": "me@example.org",
            "payment_provider": "banktransfer",
        },
    )
    assert r.status_code == 201, r.text
    assert r.json()["payment_instructions"]["details"]["BIC"] == "BYLADEM1001"
    page = await client.get(r.json()["url"].removeprefix("http://testserver"))
    assert page.status_code == 200 and "Please pay by bank transfer" in page.text
    assert (await client.get(f"/{demo.organizer}/{demo.event}/")).status_code == 200
