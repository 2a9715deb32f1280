"""The exporter endpoints: descriptors, run requests (400/403/404), and the download
semantics (409 while waiting, 410 when failed, 404 for anyone else's or unknown)."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from admit.models import Job, Team
from tests.exports.shop import build_shop, exporters_url
from tests.factories import assert_field_errors, auth

ORG = "/api/v1/organizers/acme"


async def run(client, world, identifier, body, *, token=None, organizer_level=False, headers=None):
    base = exporters_url(world, organizer_level=organizer_level)
    headers = {**auth(token or world.admin), **(headers or {})}
    return await client.post(f"{base}{identifier}/run/", json=body, headers=headers)


async def only_job(app) -> Job:
    async with app.state.db.sessionmaker() as session:
        return (await session.scalars(select(Job))).one()


async def test_event_descriptors(client, world):
    response = await client.get(exporters_url(world), headers=auth(world.admin))
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"count", "next", "previous", "results"}
    found = {d["identifier"]: d for d in body["results"]}
    assert body["count"] == len(body["results"]) >= 2
    assert [d["identifier"] for d in body["results"]] == sorted(found)
    orderlist = found["orderlist"]
    assert orderlist["verbose_name"] == "Order data"
    params = {p["name"]: p for p in orderlist["input_parameters"]}
    assert set(params) == {
        "_format",
        "paid_only",
        "include_payment_amounts",
        "group_multiple_choice",
        "date_from",
        "date_to",
    }
    assert params["_format"] == {
        "name": "_format",
        "required": True,
        "choices": [
            "xlsx",
            "orders:default",
            "orders:semicolon",
            "positions:default",
            "positions:semicolon",
            "fees:default",
            "fees:semicolon",
        ],
    }
    assert params["paid_only"] == {"name": "paid_only", "required": False}
    assert found["json"] == {
        "identifier": "json",
        "verbose_name": "Order data (JSON)",
        "input_parameters": [],
    }
    for descriptor in body["results"]:
        assert set(descriptor) == {"identifier", "verbose_name", "input_parameters"}
        for param in descriptor["input_parameters"]:
            assert set(param) in ({"name", "required"}, {"name", "required", "choices"})

    page = await client.get(f"{exporters_url(world)}?page_size=1", headers=auth(world.admin))
    assert page.json()["count"] == body["count"] and len(page.json()["results"]) == 1
    assert page.json()["next"].startswith(f"http://testserver{exporters_url(world)}?")


async def test_organizer_descriptors_offer_events(client, world):
    response = await client.get(f"{ORG}/exporters/", headers=auth(world.admin))
    assert response.status_code == 200
    found = {d["identifier"]: d for d in response.json()["results"]}
    names = [p["name"] for p in found["orderlist"]["input_parameters"]]
    assert "events" in names and "_format" in names
    assert found["orderlist"]["verbose_name"] == "Order data (all events)"


async def test_lists_show_what_the_caller_may_run(client, factory, world):
    response = await client.get(exporters_url(world), headers=auth(world.nobody))
    assert response.status_code == 200 and response.json()["count"] == 0
    vouchers = await factory.token(
        await factory.team(world.org, event_permissions=["event.vouchers:read"])
    )
    response = await client.get(exporters_url(world), headers=auth(vouchers))
    identifiers = {d["identifier"] for d in response.json()["results"]}
    assert not {"orderlist", "json"} & identifiers
    response = await client.get(f"{ORG}/exporters/", headers=auth(vouchers))
    assert "orderlist" not in {d["identifier"] for d in response.json()["results"]}


async def test_unknown_exporter_is_404(client, world):
    for organizer_level in (False, True):
        response = await run(client, world, "nope", {}, organizer_level=organizer_level)
        assert response.status_code == 404
        assert response.json() == {"detail": "No exporter with this identifier exists."}
    # json exists at event level only.
    response = await run(client, world, "json", {}, organizer_level=True)
    assert response.status_code == 404


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({}, "_format", "This field is required."),
        ({"_format": "pdf"}, "_format", '"pdf" is not a valid choice.'),
        ({"_format": None}, "_format", None),
        ({"_format": "xlsx", "paid_only": "maybe"}, "paid_only", "Must be a valid boolean."),
        ({"_format": "xlsx", "date_from": "yesterday"}, "date_from", None),
        ({"_format": "xlsx", "date_from": "2030-02-30"}, "date_from", None),
        (
            {"_format": "xlsx", "date_from": "2030-03-02", "date_to": "2030-03-01"},
            "date_to",
            "The end of the date range must not be before its start.",
        ),
        ({"_format": "xlsx", "locale": "de DE"}, "locale", None),
        ({"_format": "xlsx", "locale": 7}, "locale", None),
    ],
)
async def test_bad_input_is_400_with_field_errors(client, world, body, field, message):
    response = await run(client, world, "orderlist", body)
    errors = assert_field_errors(response, field)
    if message is not None:
        assert errors[field] == [message]


async def test_bad_bodies(client, world):
    response = await run(client, world, "orderlist", ["xlsx"])
    assert assert_field_errors(response, "non_field_errors")
    response = await client.post(
        f"{exporters_url(world)}orderlist/run/",
        content=b"{nope",
        headers={**auth(world.admin), "Content-Type": "application/json"},
    )
    assert response.status_code == 400 and response.json()["detail"].startswith("JSON parse")
    response = await run(client, world, "orderlist", {"_format": "xlsx", "events": ["x"]})
    assert response.status_code == 202  # unknown keys are ignored, as the reference does


async def test_a_caller_without_the_permission_is_403(client, factory, world):
    vouchers = await factory.token(
        await factory.team(world.org, event_permissions=["event.vouchers:read"])
    )
    for organizer_level in (False, True):
        response = await run(
            client, world, "orderlist", {"_format": "xlsx"}, token=vouchers,
            organizer_level=organizer_level,
        )  # fmt: skip
        assert response.status_code == 403
        assert response.json() == {"detail": "You do not have permission to perform this action."}


async def test_organizer_level_events_must_exist_and_be_permitted(client, factory, world):
    second = await factory.event(world.org, "afterparty")
    limited = await factory.token(
        await factory.team(
            world.org, all_events=False, events=[second], event_permissions=["event.orders:read"]
        )
    )
    for token, events, bad in [
        (world.admin, ["summit", "nope"], ["nope"]),
        (world.admin, [world.other_event.slug], [world.other_event.slug]),
        (limited, ["afterparty", "summit"], ["summit"]),
    ]:
        body = {"_format": "xlsx", "events": events}
        response = await run(client, world, "orderlist", body, token=token, organizer_level=True)
        errors = assert_field_errors(response, "events")
        assert errors["events"] == [f'"{slug}" is not a valid choice.' for slug in bad]
    body = {"_format": "xlsx", "events": "summit"}
    response = await run(client, world, "orderlist", body, organizer_level=True)
    assert_field_errors(response, "events")
    body = {"_format": "xlsx", "events": ["afterparty"]}
    response = await run(client, world, "orderlist", body, token=limited, organizer_level=True)
    assert response.status_code == 202


async def test_accepted_run_and_the_download_states(client, factory, world, clean_app):
    response = await run(client, world, "orderlist", {"_format": "orders:default"})
    assert response.status_code == 202
    assert list(response.json()) == ["download"]
    url = response.json()["download"]
    job = await only_job(clean_app)
    assert url == (
        f"http://testserver{exporters_url(world)}orderlist/download/{job.uuid}/{job.secret}/"
    )
    assert (job.kind, job.owner_kind, job.event_id) == ("export.run", "token", world.event.id)
    assert job.input["form_data"]["_format"] == "orders:default"
    assert job.input["locale"] == "en"

    # No engine runs in this test: the job waits.
    waiting = await client.get(url, headers=auth(world.admin))
    assert waiting.status_code == 409
    assert waiting.json() == {"status": "waiting", "percentage": None}
    assert waiting.headers["retry-after"] == "1"

    # Another caller of the same organizer, a wrong secret, another exporter's or level's
    # URL: as unknown as a missing job.
    other = await factory.admin_token(world.org)
    assert (await client.get(url, headers=auth(other))).status_code == 404
    uuid, secret = url.rstrip("/").split("/")[-2:]
    for wrong in (
        url.replace(secret, secret[:-2] + "xx"),
        url.replace("/orderlist/", "/json/"),
        url.replace("/events/summit", ""),
        url.replace(uuid, "0" * 32),
    ):
        response = await client.get(wrong, headers=auth(world.admin))
        assert response.status_code == 404, wrong
        assert response.json() == {"detail": "Not found."}
    response = await client.get(url, headers=auth(world.outsider))
    assert response.status_code == 403

    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(
            update(Job).values(status="failed", message="The database went away.")
        )
        await session.commit()
    failed = await client.get(url, headers=auth(world.admin))
    assert failed.status_code == 410
    assert failed.json() == {"status": "failed", "message": "The database went away."}


async def test_locale_from_body_or_accept_language(client, factory, world, clean_app):
    await run(client, world, "orderlist", {"_format": "xlsx", "locale": "de"})
    await run(
        client, world, "orderlist", {"_format": "xlsx"},
        headers={"Accept-Language": "fr-CH, fr;q=0.9, en;q=0.8"},
    )  # fmt: skip
    token = await factory.admin_token(world.org)  # a fresh owner: the limit is per caller
    await run(client, world, "orderlist", {"_format": "xlsx"}, token=token)
    async with clean_app.state.db.sessionmaker() as session:
        locales = [j.input["locale"] for j in await session.scalars(select(Job).order_by(Job.id))]
    assert locales == ["de", "fr-CH", "en"]


async def test_owner_without_the_permission_at_run_time_gets_a_failed_job(
    client, factory, world, clean_app
):
    await build_shop(client, factory, world)
    team = await factory.team(world.org, event_permissions=["event.orders:read"])
    token = await factory.token(team)
    response = await run(client, world, "orderlist", {"_format": "xlsx"}, token=token)
    url = response.json()["download"]
    async with clean_app.state.db.sessionmaker() as session:
        await session.execute(
            update(Team).where(Team.id == team.id).values(limit_event_permissions=[])
        )
        await session.commit()
    job = await only_job(clean_app)
    assert await clean_app.state.background.engine.run(job.id)
    response = await client.get(url, headers=auth(token))
    assert response.status_code == 410
    assert response.json() == {
        "status": "failed",
        "message": "You no longer have permission to export this event's data.",
    }
    job = await only_job(clean_app)
    assert job.result_key is None
