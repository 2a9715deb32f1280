"""E/ticketlayouts/ and E/ticketlayoutitems/: defaults, backgrounds, assignments, PUT/PATCH,
deletion, tenancy and cloning."""

from __future__ import annotations

import asyncio

from reportlab.lib.pagesizes import A3, landscape
from sqlalchemy import select

from admit.models import Event, Item, TicketLayout, TicketLayoutItem
from tests.checkin.helpers import event_url, ticket
from tests.factories import World, auth
from tests.uploads.helpers import pdf_bytes, stored, upload_id, upload_pdf, upload_png

TEXT = {"type": "textarea", "left": "10", "bottom": "250", "width": "100", "content": "event_name"}
QR = {"type": "barcodearea", "left": 130, "bottom": 200, "size": 64}


def layouts_url(world: World, rest: str = "") -> str:
    return event_url(world, f"ticketlayouts/{rest}")


async def create(client, world: World, **body):
    body.setdefault("name", "Layout")
    response = await client.post(layouts_url(world), json=body, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    return response.json()


async def defaults(client, world: World) -> dict[int, bool]:
    response = await client.get(layouts_url(world), headers=auth(world.admin))
    assert response.status_code == 200
    return {layout["id"]: layout["default"] for layout in response.json()["results"]}


async def test_create_and_read_back(client, world: World):
    created = await create(client, world, name="Standard", layout=[TEXT, QR])
    assert created == {
        "id": created["id"],
        "name": "Standard",
        "default": True,
        "layout": [TEXT, QR],  # stored as sent
        "background": None,
        "item_assignments": [],
    }
    response = await client.get(layouts_url(world, f"{created['id']}/"), headers=auth(world.admin))
    assert response.json() == created
    listed = await client.get(layouts_url(world), headers=auth(world.admin))
    assert listed.json() == {"count": 1, "next": None, "previous": None, "results": [created]}


async def test_one_default_per_event(client, world: World):
    first = await create(client, world, default=False)
    assert first["default"] is True  # the first layout of an event is its default
    second = await create(client, world)
    assert await defaults(client, world) == {first["id"]: True, second["id"]: False}
    third = await create(client, world, default=True)
    assert await defaults(client, world) == {
        first["id"]: False,
        second["id"]: False,
        third["id"]: True,
    }

    url = layouts_url(world, f"{second['id']}/")
    response = await client.patch(url, json={"default": True}, headers=auth(world.admin))
    assert response.status_code == 200 and response.json()["default"] is True
    assert await defaults(client, world) == {
        first["id"]: False,
        second["id"]: True,
        third["id"]: False,
    }

    response = await client.patch(url, json={"default": False}, headers=auth(world.admin))
    assert response.status_code == 400
    assert response.json() == {
        "default": [
            "The default layout stays the default until another layout is made the default."
        ]
    }
    # PUT keeps omitted fields: the default layout stays the default.
    response = await client.put(url, json={"name": "Renamed"}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json()["default"] is True
    response = await client.put(
        url, json={"name": "Renamed", "default": False}, headers=auth(world.admin)
    )
    assert response.status_code == 400 and "default" in response.json()


async def test_defaults_are_per_event(client, world: World, factory):
    other = await factory.event(world.org, "other")
    mine = await create(client, world)
    response = await client.post(
        event_url(world, "ticketlayouts/", other), json={"name": "X"}, headers=auth(world.admin)
    )
    assert response.json()["default"] is True
    assert (await defaults(client, world))[mine["id"]] is True


async def test_patch_and_put_change_only_what_they_send(client, world: World, factory):
    item = await ticket(factory, world.event)
    created = await create(
        client, world, layout=[TEXT], item_assignments=[{"item": item.id}],
        background=await upload_pdf(client, world.admin),
    )  # fmt: skip
    url = layouts_url(world, f"{created['id']}/")
    response = await client.patch(url, json={"name": "New name"}, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json() == {**created, "name": "New name"}

    body = {"name": "Put", "default": True, "layout": [QR]}
    response = await client.put(url, json=body, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    data = response.json()
    # The background is kept: PUT keeps what it omits.
    assert (data["name"], data["layout"]) == ("Put", [QR])
    assert data["background"] == created["background"]
    # Assignments are written only when sent (the spec has them read-only).
    assert data["item_assignments"] == [{"sales_channel": "web", "item": item.id}]


async def test_background_set_kept_and_cleared(client, world: World, clean_app):
    file_id = await upload_pdf(client, world.admin)
    created = await create(client, world, background=file_id, layout=[QR])
    url = created["background"]
    assert url.startswith("http://testserver/api/v1/media/") and url.endswith("/background.pdf")
    row = await stored(clean_app, file_id)
    assert row is not None and row.expires is None  # used: no longer expires

    detail = layouts_url(world, f"{created['id']}/")
    body = {"name": "Same", "default": True, "layout": [QR], "background": url}
    response = await client.put(detail, json=body, headers=auth(world.admin))
    assert response.status_code == 200, response.text
    assert response.json()["background"] == url
    # The same file under another host (a proxy) is still the current file.
    other_host = url.replace("http://testserver", "https://tickets.example")
    response = await client.patch(
        detail, json={"background": other_host}, headers=auth(world.admin)
    )
    assert response.status_code == 200 and response.json()["background"] == url

    response = await client.patch(detail, json={"background": None}, headers=auth(world.admin))
    assert response.status_code == 200 and response.json()["background"] is None
    response = await client.patch(detail, json={"background": url}, headers=auth(world.admin))
    assert response.status_code == 400  # no longer the current file
    assert "Upload the file" in response.json()["background"][0]


async def test_bad_backgrounds(client, world: World, factory):
    png = await upload_png(client, world.admin)
    designer = await factory.team(world.org, event_permissions=["event.settings.general:write"])
    foreign = await upload_pdf(client, await factory.token(designer))  # another credential's
    for value, message in [
        (png, "must be of type application/pdf"),
        (foreign, "does not exist or was uploaded by someone else"),
        ("https://example.org/bg.pdf", "Upload the file with POST /api/v1/upload"),
        ("file:" + "a" * 32, "does not exist"),
    ]:
        response = await client.post(
            layouts_url(world), json={"name": "X", "background": value}, headers=auth(world.admin)
        )
        assert response.status_code == 400, response.text
        assert message in response.json()["background"][0]
    response = await client.post(
        layouts_url(world), json={"name": "X", "background": 12}, headers=auth(world.admin)
    )
    assert response.status_code == 400 and "background" in response.json()
    assert await defaults(client, world) == {}


async def test_positions_follow_the_background_page_size(client, world: World):
    wide = {"type": "barcodearea", "left": 380, "bottom": 250, "size": 30}
    response = await client.post(
        layouts_url(world), json={"name": "A4", "layout": [wide]}, headers=auth(world.admin)
    )
    assert response.status_code == 400
    assert response.json()["layout"][0].startswith('Element 0: "left" (380 mm) lies outside')
    a3 = await upload_id(client, world.admin, pdf_bytes(landscape(A3)), filename="a3.pdf")
    created = await create(client, world, layout=[wide], background=a3)
    # Dropping the background puts the element outside A4: refused on the merged state.
    url = layouts_url(world, f"{created['id']}/")
    response = await client.patch(url, json={"background": None}, headers=auth(world.admin))
    assert response.status_code == 400 and "layout" in response.json()
    # Two background pages allow page 2.
    two = await upload_id(client, world.admin, pdf_bytes(pages=2))
    second = {**QR, "page": 2}
    response = await client.patch(
        url, json={"background": two, "layout": [second]}, headers=auth(world.admin)
    )
    assert response.status_code == 200, response.text


async def test_assignments_move_between_layouts_and_are_listed(client, world: World, factory):
    one = await ticket(factory, world.event, "One")
    two = await ticket(factory, world.event, "Two")
    first = await create(
        client, world, item_assignments=[
            {"item": one.id}, {"item": one.id, "sales_channel": "box_office"}, {"item": two.id},
            {"item": two.id},  # a repeated pair counts once
        ],
    )  # fmt: skip
    assert first["item_assignments"] == [
        {"sales_channel": "box_office", "item": one.id},
        {"sales_channel": "web", "item": one.id},
        {"sales_channel": "web", "item": two.id},
    ]
    second = await create(
        client, world, item_assignments=[{"item": one.id, "sales_channel": "web"}]
    )
    assert second["item_assignments"] == [{"sales_channel": "web", "item": one.id}]
    response = await client.get(layouts_url(world, f"{first['id']}/"), headers=auth(world.admin))
    assert response.json()["item_assignments"] == [
        {"sales_channel": "box_office", "item": one.id},
        {"sales_channel": "web", "item": two.id},
    ]
    listed = await client.get(event_url(world, "ticketlayoutitems/"), headers=auth(world.admin))
    assert listed.status_code == 200
    rows = {(r["layout"], r["item"], r["sales_channel"]) for r in listed.json()["results"]}
    assert rows == {
        (first["id"], one.id, "box_office"),
        (first["id"], two.id, "web"),
        (second["id"], one.id, "web"),
    }
    assert all(
        set(r) == {"id", "layout", "item", "sales_channel"} for r in listed.json()["results"]
    )
    # An empty list drops the layout's assignments.
    url = layouts_url(world, f"{second['id']}/")
    response = await client.patch(url, json={"item_assignments": []}, headers=auth(world.admin))
    assert response.json()["item_assignments"] == []


async def test_bad_assignments(client, world: World, factory):
    mine = await ticket(factory, world.event)
    foreign = await ticket(factory, world.other_event)
    body = {"name": "X", "item_assignments": [{"item": mine.id}, {"item": foreign.id}]}
    response = await client.post(layouts_url(world), json=body, headers=auth(world.admin))
    assert response.status_code == 400
    assert response.json() == {
        "item_assignments": [{}, {"item": [f'Invalid pk "{foreign.id}" - object does not exist.']}]
    }
    body = {"name": "X", "item_assignments": [{"item": mine.id}, {"item": 2**40}, {"item": True}]}
    response = await client.post(layouts_url(world), json=body, headers=auth(world.admin))
    assert response.status_code == 400
    errors = response.json()["item_assignments"]
    assert errors[0] == {} and "item" in errors[1] and "item" in errors[2]
    body = {"name": "X", "item_assignments": [{"item": mine.id, "sales_channel": "pigeon"}]}
    response = await client.post(layouts_url(world), json=body, headers=auth(world.admin))
    assert response.status_code == 400
    assert response.json() == {
        "item_assignments": [{"sales_channel": ['"pigeon" is not a valid choice.']}]
    }


async def test_delete_moves_default_and_assignments(client, world: World, factory):
    item = await ticket(factory, world.event)
    first = await create(client, world)
    second = await create(client, world, item_assignments=[{"item": item.id}])
    third = await create(client, world)
    response = await client.delete(
        layouts_url(world, f"{second['id']}/"), headers=auth(world.admin)
    )
    assert response.status_code == 204
    response = await client.get(layouts_url(world, f"{first['id']}/"), headers=auth(world.admin))
    assert response.json()["item_assignments"] == [{"sales_channel": "web", "item": item.id}]

    # Deleting the default: the oldest remaining layout becomes the default and takes them.
    response = await client.delete(layouts_url(world, f"{first['id']}/"), headers=auth(world.admin))
    assert response.status_code == 204
    response = await client.get(layouts_url(world, f"{third['id']}/"), headers=auth(world.admin))
    assert response.json()["default"] is True
    assert response.json()["item_assignments"] == [{"sales_channel": "web", "item": item.id}]

    # The last layout goes with its assignments.
    response = await client.delete(layouts_url(world, f"{third['id']}/"), headers=auth(world.admin))
    assert response.status_code == 204
    async with factory.sessionmaker() as session:
        assert list(await session.scalars(select(TicketLayoutItem))) == []
    assert (
        await client.get(layouts_url(world, f"{third['id']}/"), headers=auth(world.admin))
    ).status_code == 404


async def test_tenancy_and_permissions(client, world: World, factory):
    their_url = f"/api/v1/organizers/{world.other.slug}/events/{world.other_event.slug}/"
    theirs = await client.post(
        f"{their_url}ticketlayouts/",
        json={"name": "Theirs"},
        headers=auth(world.outsider),
    )
    assert theirs.status_code == 201
    their_id = theirs.json()["id"]
    for method in ("GET", "PATCH", "PUT", "DELETE"):
        response = await client.request(
            method,
            layouts_url(world, f"{their_id}/"),
            json={"name": "Mine"},
            headers=auth(world.admin),
        )
        assert response.status_code == 404, (method, response.text)
    response = await client.get(f"{their_url}ticketlayouts/", headers=auth(world.admin))
    assert response.status_code == 403
    response = await client.get(
        f"{their_url}ticketlayouts/{their_id}/", headers=auth(world.outsider)
    )
    assert response.json()["name"] == "Theirs"  # untouched
    mine = await create(client, world)
    # Reading needs access to the event only; writing the event settings permission.
    assert (await client.get(layouts_url(world), headers=auth(world.nobody))).status_code == 200
    response = await client.patch(
        layouts_url(world, f"{mine['id']}/"), json={"name": "x"}, headers=auth(world.nobody)
    )
    assert response.status_code == 403
    team = await factory.team(world.org, event_permissions=["event.settings.general:write"])
    writer = await factory.token(team)
    response = await client.patch(
        layouts_url(world, f"{mine['id']}/"), json={"name": "x"}, headers=auth(writer)
    )
    assert response.status_code == 200


async def test_cloning_copies_layouts_and_assignments(client, world: World, factory):
    item = await ticket(factory, world.event)
    background = await upload_pdf(client, world.admin)
    first = await create(client, world, layout=[TEXT], background=background)
    await create(client, world, name="Box office", default=True, layout=[QR],
                 item_assignments=[{"item": item.id, "sales_channel": "box_office"}])  # fmt: skip
    new = {"name": {"en": "Next"}, "slug": "next", "date_from": "2031-05-01T10:00:00Z"}
    response = await client.post(
        f"/api/v1/organizers/{world.org.slug}/events/{world.event.slug}/clone/",
        json=new,
        headers=auth(world.admin),
    )
    assert response.status_code == 201, response.text
    async with factory.sessionmaker() as session:
        target = (await session.scalars(select(Event).where(Event.slug == "next"))).one()
        copied_item = (await session.scalars(select(Item).where(Item.event_id == target.id))).one()
    response = await client.get(
        f"/api/v1/organizers/{world.org.slug}/events/next/ticketlayouts/", headers=auth(world.admin)
    )
    copies = response.json()["results"]
    assert [(c["name"], c["default"], c["layout"]) for c in copies] == [
        ("Layout", False, [TEXT]),
        ("Box office", True, [QR]),
    ]
    assert copies[0]["background"] == first["background"]  # the file is shared
    assert copies[1]["item_assignments"] == [
        {"sales_channel": "box_office", "item": copied_item.id}
    ]
    async with factory.sessionmaker() as session:
        source_ids = set(
            await session.scalars(
                select(TicketLayout.id).where(TicketLayout.event_id == world.event.id)
            )
        )
        assert source_ids.isdisjoint(c["id"] for c in copies)


async def test_concurrent_first_layouts_get_exactly_one_default(client, world: World):
    # Each request counts the event's layouts before deciding: without the event lock two
    # "first" layouts would both become the default (PostgreSQL runs them concurrently).
    responses = await asyncio.gather(
        *(
            client.post(layouts_url(world), json={"name": f"L{n}"}, headers=auth(world.admin))
            for n in range(6)
        )
    )
    assert all(r.status_code == 201 for r in responses), [r.text for r in responses]
    assert sum((await defaults(client, world)).values()) == 1
    responses = await asyncio.gather(
        *(
            client.patch(
                layouts_url(world, f"{r.json()['id']}/"),
                json={"default": True},
                headers=auth(world.admin),
            )
            for r in responses
        )
    )
    assert all(r.status_code == 200 for r in responses), [r.text for r in responses]
    assert sum((await defaults(client, world)).values()) == 1
