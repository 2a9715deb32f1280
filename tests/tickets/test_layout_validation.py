"""Bad layouts through the API: 400 ``{"layout": ["Element <i>: ..."]}``, never a 500, and
oversized ones refused quickly."""

from __future__ import annotations

import orjson

from admit.models import Question
from tests.checkin.helpers import event_url
from tests.factories import World, auth

GOOD = {"type": "barcodearea", "left": 10, "bottom": 10, "size": 30}
TEXT = {"type": "textarea", "left": 10, "bottom": 200, "width": 80, "content": "attendee_name"}

BAD = [
    ({"type": "videoarea", "left": 1, "bottom": 1}, 'unknown type ("videoarea")'),
    ({"left": 1, "bottom": 1}, "unknown type (missing)"),
    ("textarea", "expected an object"),
    ({**TEXT, "content": "shoe_size"}, '"content" is an unknown variable: "shoe_size"'),
    ({**TEXT, "content": "question_NOPE"}, "names no question of this event"),
    ({**TEXT, "content": None}, '"content" is required'),
    ({**TEXT, "width": -5}, '"width" must be greater than 0'),
    ({**TEXT, "width": 0}, '"width" must be greater than 0'),
    ({**GOOD, "size": "0"}, '"size" must be greater than 0'),
    ({**GOOD, "size": None}, '"size" is required'),
    ({**TEXT, "left": "ten"}, '"left" must be a number'),
    ({**TEXT, "left": True}, '"left" must be a number'),
    ({**TEXT, "bottom": [1]}, '"bottom" must be a number'),
    ({**TEXT, "fontsize": "1e400"}, '"fontsize" must be a number'),
    ({**TEXT, "left": -3}, '"left" (-3 mm) lies outside the page'),
    ({**TEXT, "bottom": 300}, '"bottom" (300 mm) lies outside the page'),
    ({**GOOD, "left": 190}, "ends 10.0 mm beyond the page"),
    ({**GOOD, "page": 2}, '"page" is 2, but without a background there is 1 page(s)'),
    ({**GOOD, "page": 1.5}, '"page" must be a whole number from 1'),
    ({**TEXT, "color": [0, 0, 300]}, '"color" values must lie between 0 and 255'),
    ({**TEXT, "color": [0, 0, 0, 2]}, '"color" alpha must lie between 0 and 1'),
    ({**TEXT, "color": "red"}, '"color" must be [red, green, blue]'),
    ({**TEXT, "align": "justify"}, '"align" is "justify"; expected one of left, center, right'),
    ({**TEXT, "fontfamily": "Comic Sans"}, '"fontfamily" is "Comic Sans"'),
    ({**TEXT, "bold": "yes"}, '"bold" must be true or false'),
    ({**TEXT, "text": 5}, '"text" must be a string'),
    ({**TEXT, "text_i18n": {"en": 5}}, '"text_i18n" must map language codes'),
    ({**TEXT, "text": "x" * 10_001}, '"text" may hold at most 10000 characters'),
    ({"type": "imagearea", "left": 1, "bottom": 1, "width": 5, "height": 5, "content": "logo"},
     '"content" is "logo"; expected one of item_picture'),
    ({"type": "poweredby", "left": 1, "bottom": 1, "size": 5, "content": "pink"},
     '"content" is "pink"; expected one of dark, white'),
]  # fmt: skip


def layouts_url(world: World) -> str:
    return event_url(world, "ticketlayouts/")


async def test_each_bad_element_is_named_by_its_index(client, world: World):
    # One world for all cases: a refused layout writes nothing.
    for element, message in BAD:
        body = {"name": "Bad", "layout": [GOOD, TEXT, element]}
        response = await client.post(layouts_url(world), json=body, headers=auth(world.admin))
        assert response.status_code == 400, (element, response.text)
        errors = response.json()
        assert list(errors) == ["layout"], errors
        assert any(m.startswith("Element 2: ") and message in m for m in errors["layout"]), (
            message,
            errors,
        )
        assert not any(m.startswith(("Element 0", "Element 1")) for m in errors["layout"])
    listed = await client.get(layouts_url(world), headers=auth(world.admin))
    assert listed.json()["count"] == 0


async def test_bad_layout_on_patch_and_put(client, world: World):
    created = await client.post(
        layouts_url(world), json={"name": "Good", "layout": [GOOD]}, headers=auth(world.admin)
    )
    url = f"{layouts_url(world)}{created.json()['id']}/"
    bad = [{"type": "nope"}]
    for method, body in (("PATCH", {"layout": bad}), ("PUT", {"name": "x", "layout": bad})):
        response = await client.request(method, url, json=body, headers=auth(world.admin))
        assert response.status_code == 400, response.text
        assert response.json()["layout"][0].startswith("Element 0: unknown type")
    response = await client.get(url, headers=auth(world.admin))
    assert response.json()["layout"] == [GOOD]


async def test_layout_must_be_a_list_of_objects(client, world: World):
    for layout in ({"type": "textarea"}, "x", 5):
        response = await client.post(
            layouts_url(world), json={"name": "X", "layout": layout}, headers=auth(world.admin)
        )
        assert response.status_code == 400
        assert "layout" in response.json()


async def test_question_variables_need_the_events_question(client, world: World, factory):
    element = {**TEXT, "content": "question_DIET"}
    response = await client.post(
        layouts_url(world), json={"name": "Q", "layout": [element]}, headers=auth(world.admin)
    )
    assert response.status_code == 400
    await factory._add(
        Question(event_id=world.event.id, question={"en": "Diet?"}, type="S", identifier="DIET")
    )
    response = await client.post(
        layouts_url(world), json={"name": "Q", "layout": [element]}, headers=auth(world.admin)
    )
    assert response.status_code == 201, response.text


async def test_too_many_elements_or_bytes(client, world: World):
    response = await client.post(
        layouts_url(world), json={"name": "X", "layout": [GOOD] * 501}, headers=auth(world.admin)
    )
    assert response.status_code == 400
    assert response.json() == {"layout": ["A layout has at most 500 elements, not 501."]}
    fat = [{**TEXT, "text": "x" * 9_000, "content": "other"} for _ in range(120)]
    response = await client.post(
        layouts_url(world), json={"name": "X", "layout": fat}, headers=auth(world.admin)
    )
    assert response.status_code == 400
    assert response.json() == {"layout": ["A layout may hold at most 1,000,000 bytes of JSON."]}


async def test_ten_megabytes_of_layout_json_is_a_quick_400(client, world: World):
    element = orjson.dumps({**TEXT, "content": "other", "text": "y" * 1000})
    count = 10 * 1024 * 1024 // len(element) + 1
    raw = b'{"name": "Huge", "layout": [' + b",".join([element] * count) + b"]}"
    assert len(raw) > 10 * 1024 * 1024
    headers = {**auth(world.admin), "Content-Type": "application/json"}
    # Quick: the server stops reading once past its limit (ADMIT_MAX_BODY_BYTES, 5 MB) and
    # never parses the rest; counted in bytes taken from the client, on any machine.
    limit = 5 * 1024 * 1024
    step = 256 * 1024
    taken = {"bytes": 0}

    async def chunks():
        for start in range(0, len(raw), step):
            taken["bytes"] += len(raw[start : start + step])
            yield raw[start : start + step]

    declared = {**headers, "Content-Length": str(len(raw))}
    response = await client.post(layouts_url(world), content=chunks(), headers=declared)
    assert response.status_code == 400, response.text
    assert response.json()["layout"][0].startswith("A layout may hold at most 1,000,000 bytes")
    assert taken["bytes"] <= limit + step, taken

    # The same without a declared length (chunked): cut off once past the server's limit.
    taken["bytes"] = 0
    response = await client.post(layouts_url(world), content=chunks(), headers=headers)
    assert response.status_code == 400
    assert "layout" in response.json()
    assert taken["bytes"] <= limit + step, taken
