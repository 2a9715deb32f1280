"""Order and position fields of the reference: ``api_meta``, ``plugin_data``,
``custom_followup_at``, ``tax_rounding_mode``; positions' ``plugin_data`` and ``print_logs``
(written through ``printlog/``)."""

from __future__ import annotations

from tests.factories import auth
from tests.orders import helpers as h


async def test_order_fields_on_create_patch_and_read(client, world, factory):
    item = await h.item(factory, world.event)
    body = h.body(item.id, api_meta={"crm": {"id": 7}}, custom_followup_at="2030-04-01")
    r = await client.post(h.url(world), json=body, headers=auth(world.admin))
    assert r.status_code == 201, r.text
    order = r.json()
    assert order["api_meta"] == {"crm": {"id": 7}}
    assert order["plugin_data"] == {}
    assert order["custom_followup_at"] == "2030-04-01"
    assert order["tax_rounding_mode"] == "line"
    assert order["positions"][0]["plugin_data"] == {}
    assert order["positions"][0]["print_logs"] == []
    path = f"{h.url(world)}{order['code']}/"
    patched = await client.patch(
        path, json={"api_meta": {"x": 1}, "custom_followup_at": None}, headers=auth(world.admin)
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["api_meta"] == {"x": 1}
    assert patched.json()["custom_followup_at"] is None
    # plugin_data is read-only: sent, it is ignored.
    ignored = await client.patch(path, json={"plugin_data": {"a": 1}}, headers=auth(world.admin))
    assert ignored.json()["plugin_data"] == {}
    listed = await client.get(h.url(world), headers=auth(world.admin))
    assert listed.json()["results"][0]["api_meta"] == {"x": 1}


async def test_bad_order_field_values_are_400(client, world, factory):
    item = await h.item(factory, world.event)
    for field, value in (
        ("api_meta", "text"),
        ("api_meta", {"big": "x" * 70000}),
        ("custom_followup_at", "tomorrow"),
        ("custom_followup_at", 12345),
        ("tax_rounding_mode", "nearest"),
        ("tax_rounding_mode", "sum_by_net"),  # a real mode, but not computed here
    ):
        r = await client.post(
            h.url(world), json=h.body(item.id, **{field: value}), headers=auth(world.admin)
        )
        assert r.status_code == 400, (field, value, r.text)
        assert field in r.json()
    explicit = await client.post(
        h.url(world), json=h.body(item.id, tax_rounding_mode="line"), headers=auth(world.admin)
    )
    assert explicit.status_code == 201


async def test_print_logs(client, world, factory):
    item = await h.item(factory, world.event)
    order = (
        await client.post(h.url(world), json=h.body(item.id), headers=auth(world.admin))
    ).json()
    pid = order["positions"][0]["id"]
    log_url = h.url(world, f"orderpositions/{pid}/printlog/")
    r = await client.post(
        log_url,
        json={"source": "pretixscan", "type": "badge", "info": {"printer": "front"}},
        headers=auth(world.admin),
    )
    assert r.status_code == 201, r.text
    log = r.json()
    assert log["type"] == "badge" and log["source"] == "pretixscan"
    assert log["device_id"] is None and log["info"] == {"printer": "front"}
    position = await client.get(h.url(world, f"orderpositions/{pid}/"), headers=auth(world.admin))
    assert position.json()["print_logs"] == [log]
    detail = await client.get(f"{h.url(world)}{order['code']}/", headers=auth(world.admin))
    assert detail.json()["positions"][0]["print_logs"] == [log]
    for bad in (
        {"source": "x", "type": "poster"},
        {"type": "badge"},
        {"source": "", "type": "ticket"},
    ):
        r = await client.post(log_url, json=bad, headers=auth(world.admin))
        assert r.status_code == 400, bad
    missing = await client.post(
        h.url(world, "orderpositions/999999/printlog/"),
        json={"source": "x", "type": "ticket"},
        headers=auth(world.admin),
    )
    assert missing.status_code == 404
