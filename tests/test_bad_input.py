"""Bad input of every kind, through HTTP against real endpoints: always a DRF-shaped 4xx.

Never a 500 (the client fixture fails the test on any 5xx) and never FastAPI's 422.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest

from admit.config import Settings
from tests.factories import World, auth

TEAMS = "/api/v1/organizers/acme/teams/"
EVENTS = "/api/v1/organizers/acme/events/"
EVENT = "/api/v1/organizers/acme/events/summit/"


def assert_field_errors(response: httpx.Response, *fields: str) -> dict:
    assert response.status_code == 400, response.text
    body = response.json()
    assert isinstance(body, dict)
    for field in fields:
        messages = body.get(field)
        assert isinstance(messages, list) and messages, body
        assert all(isinstance(m, str) and m for m in messages), body
    return body


def assert_detail(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["detail"], body
    assert isinstance(body["detail"], str) and body["detail"]
    return body["detail"]


async def team_count(client: httpx.AsyncClient, world: World) -> int:
    response = await client.get(TEAMS, headers=auth(world.admin))
    assert response.status_code == 200
    return response.json()["count"]


# -- malformed bodies ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"{", b'{"name": }', b"{'name': 'x'}", b'{"name": "x",}', b"nul", b"NaN", b"\xff\xfe{}"],
)
async def test_malformed_json_is_a_parse_error(client, world: World, raw: bytes):
    response = await client.post(
        TEAMS, content=raw, headers={**auth(world.admin), "Content-Type": "application/json"}
    )
    detail = assert_detail(response, 400)
    assert detail.startswith("JSON parse error - ")


async def test_malformed_json_without_content_type_is_a_parse_error(client, world: World):
    response = await client.post(EVENTS, content=b"{oops", headers=auth(world.admin))
    assert assert_detail(response, 400).startswith("JSON parse error - ")


async def test_malformed_json_on_patch_is_a_parse_error(client, world: World):
    headers = {**auth(world.admin), "Content-Type": "application/json"}
    response = await client.patch(EVENT, content=b'{"name":', headers=headers)
    assert assert_detail(response, 400).startswith("JSON parse error - ")


async def test_deeply_nested_json_does_not_crash(client, world: World):
    raw = b"[" * 5000 + b"]" * 5000
    response = await client.post(TEAMS, content=raw, headers=auth(world.admin))
    assert assert_detail(response, 400).startswith("JSON parse error - ")


@pytest.mark.parametrize(
    ("body", "kind"),
    [("[]", "list"), ('[{"name": "x"}]', "list"), ('"team"', "str"), ("42", "int"),
     ("true", "bool"), ("null", "null"), ("1.5", "float")],
)  # fmt: skip
async def test_non_object_body_is_a_non_field_error(client, world: World, body: str, kind: str):
    response = await client.post(
        TEAMS, content=body, headers={**auth(world.admin), "Content-Type": "application/json"}
    )
    errors = assert_field_errors(response, "non_field_errors")
    assert errors == {"non_field_errors": [f"Invalid data. Expected a dictionary, but got {kind}."]}


async def test_non_object_body_on_event_create_and_update(client, world: World):
    for method, url in (("POST", EVENTS), ("PATCH", EVENT), ("PUT", EVENT)):
        response = await client.request(method, url, json=["x"], headers=auth(world.admin))
        assert_field_errors(response, "non_field_errors")


async def test_empty_body_is_an_empty_object(client, world: World):
    response = await client.post(TEAMS, content=b"", headers=auth(world.admin))
    assert assert_field_errors(response, "name") == {"name": ["This field is required."]}
    response = await client.post(EVENTS, content=b"  \n ", headers=auth(world.admin))
    assert_field_errors(response, "name", "slug", "date_from")


# -- wrong types and values ---------------------------------------------------------------


async def test_wrong_types_are_field_errors(client, world: World):
    response = await client.post(
        TEAMS,
        json={"name": 5, "all_events": "maybe", "limit_events": "summit", "require_2fa": []},
        headers=auth(world.admin),
    )
    errors = assert_field_errors(response, "name", "all_events", "limit_events", "require_2fa")
    assert errors["name"] == ["Not a valid string."]
    assert errors["all_events"] == ["Must be a valid boolean."]
    assert errors["limit_events"] == ['Expected a list of items but got type "str".']
    assert await team_count(client, world) == 2  # the fixture's two teams: nothing created


async def test_null_for_non_nullable_field(client, world: World):
    response = await client.post(
        TEAMS, json={"name": None, "all_events": None}, headers=auth(world.admin)
    )
    errors = assert_field_errors(response, "name", "all_events")
    assert errors["name"] == ["This field may not be null."]
    assert errors["all_events"] == ["This field may not be null."]


async def test_primitive_list_element_errors_are_reported_on_the_list(client, world: World):
    response = await client.post(
        TEAMS, json={"name": "x", "limit_events": ["summit", 5, None]}, headers=auth(world.admin)
    )
    errors = assert_field_errors(response, "limit_events")
    assert all(isinstance(m, str) for m in errors["limit_events"])


async def test_unknown_permission_is_not_a_valid_choice(client, world: World):
    response = await client.post(
        TEAMS,
        json={"name": "x", "limit_event_permissions": ["event.orders:read", "event.fly:write"]},
        headers=auth(world.admin),
    )
    errors = assert_field_errors(response, "limit_event_permissions")
    assert errors["limit_event_permissions"] == ['"event.fly:write" is not a valid choice.']
    response = await client.post(
        TEAMS, json={"name": "x", "limit_organizer_permissions": [""]}, headers=auth(world.admin)
    )
    assert assert_field_errors(response, "limit_organizer_permissions") == {
        "limit_organizer_permissions": ['"" is not a valid choice.']
    }


async def test_event_field_errors(client, world: World):
    response = await client.post(
        EVENTS,
        json={
            "name": {"en": "X"},
            "slug": "new",
            "date_from": "tomorrow",
            "currency": "euro",
            "timezone": "Mars/Olympus",
            "geo_lat": 1e300,
            "live": "sometimes",
            "sales_channels": ["web", "carrier-pigeon"],
        },
        headers=auth(world.admin),
    )
    errors = assert_field_errors(
        response, "date_from", "currency", "timezone", "geo_lat", "live", "sales_channels"
    )
    assert errors["date_from"][0].startswith("Datetime has wrong format.")
    assert errors["timezone"] == ['"Mars/Olympus" is not a valid choice.']
    assert errors["sales_channels"] == ['"carrier-pigeon" is not a valid choice.']


@pytest.mark.parametrize("slug", ["-x", "a b", "a/b", "ü", "", "x" * 51])
async def test_bad_event_slugs(client, world: World, slug: str):
    response = await client.post(
        EVENTS,
        json={"name": "X", "slug": slug, "date_from": "2030-01-01T10:00:00Z"},
        headers=auth(world.admin),
    )
    assert list(assert_field_errors(response, "slug")) == ["slug"]


@pytest.mark.parametrize(
    "date_from",
    ["9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+01:00", "10000-01-01T00:00:00Z"],
)
async def test_datetimes_beyond_utc_range_are_rejected(client, world: World, date_from: str):
    response = await client.post(
        EVENTS,
        json={"name": "X", "slug": "edge", "date_from": date_from},
        headers=auth(world.admin),
    )
    assert list(assert_field_errors(response, "date_from")) == ["date_from"]


@pytest.mark.parametrize(
    "query",
    [
        "is_public=maybe",
        "live=2",
        "date_from_after=yesterday",
        "date_from_before=9999-12-31T23:00:00-05:00",
        "sales_channel=carrier-pigeon",
    ],
)
async def test_bad_query_parameters_are_field_errors(client, world: World, query: str):
    response = await client.get(f"{EVENTS}?{query}", headers=auth(world.admin))
    name = query.split("=", 1)[0]
    assert list(assert_field_errors(response, name)) == [name]


async def test_bad_page_parameters(client, world: World):
    for page in ("0", "-1", "abc", "99", str(10**30)):
        response = await client.get(f"{EVENTS}?page={page}", headers=auth(world.admin))
        assert assert_detail(response, 404) == "Invalid page."
    for size in ("abc", "0", "-5", str(10**30)):
        response = await client.get(f"{EVENTS}?page_size={size}", headers=auth(world.admin))
        assert response.status_code == 200
        assert response.json()["count"] == 1


# -- unicode and control characters ------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "Zürich 東京 Αθήνα",
        "🎟️ tickets 👩‍👩‍👧",
        "\u202eright-to-left override",
        "tab\tnew\nline\rcarriage\x1b[31mescape\x7f",
        "\ufeffbom and zero\u200bwidth",
        "x" * 190,
    ],
)
async def test_unicode_and_control_characters_round_trip(client, world: World, name: str):
    response = await client.post(TEAMS, json={"name": name}, headers=auth(world.admin))
    assert response.status_code == 201, response.text
    team_id = response.json()["id"]
    detail = await client.get(f"{TEAMS}{team_id}/", headers=auth(world.admin))
    assert detail.json()["name"] == name


async def test_nul_character_in_body_strings_is_a_field_error(client, world: World):
    # PostgreSQL text cannot hold NUL: refused up front, keyed like any field error.
    nul = "Null characters are not allowed."
    response = await client.post(TEAMS, json={"name": "a\x00b"}, headers=auth(world.admin))
    assert assert_field_errors(response, "name") == {"name": [nul]}
    response = await client.post(
        EVENTS,
        json={
            "name": {"en": "ok", "de": "n\x00"},
            "slug": "nul",
            "date_from": "2030-01-01T10:00:00Z",
            "meta_data": {"k\x00": "v"},
            "plugins": ["ok", "bad\x00"],
        },
        headers=auth(world.admin),
    )
    assert assert_field_errors(response, "meta_data", "plugins") == {
        "name": {"de": [nul]},
        "meta_data": [nul],
        "plugins": [nul],
    }
    assert await team_count(client, world) == 2


async def test_escaped_backslash_before_u0000_is_not_a_nul(client, world: World):
    response = await client.post(
        TEAMS, content=rb'{"name": "a\\u0000b"}', headers=auth(world.admin)
    )
    assert response.status_code == 201, response.text
    assert response.json()["name"] == "a\\u0000b"


async def test_lone_surrogate_escape_is_rejected_cleanly(client, world: World):
    response = await client.post(
        TEAMS,
        content=b'{"name": "\\ud800"}',
        headers={**auth(world.admin), "Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text


async def test_unicode_in_path_and_query_does_not_crash(client, world: World):
    for url in (
        "/api/v1/organizers/acme/events/s%C3%BCmmit/",
        "/api/v1/organizers/%F0%9F%8E%9F/events/",
        f"{EVENTS}?search=%F0%9F%8E%9F",
        f"{EVENTS}?search=%FF%FE",
    ):
        response = await client.get(url, headers=auth(world.admin))
        assert response.status_code in (200, 403), (url, response.text)


@pytest.mark.parametrize(
    "path", ["/api/v1/organizers/acme/events/%00/", f"{TEAMS}1%00/", "/api/v1/organizers/a%00/"]
)
async def test_nul_character_in_path_is_404(client, world: World, path: str):
    response = await client.get(path, headers=auth(world.admin))
    assert assert_detail(response, 404) == "Not found."


async def test_nul_character_in_query_is_a_field_error(client, world: World):
    response = await client.get(
        f"{EVENTS}?search=a%00&live=true&attr%5Bk%5D=%00&x%00=1", headers=auth(world.admin)
    )
    nul = ["Null characters are not allowed."]
    assert assert_field_errors(response) == {"search": nul, "attr[k]": nul, "x\x00": nul}


# -- size limits and media types ----------------------------------------------------------


@pytest.fixture
def small_limit(clean_app, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(clean_app.state.settings, "max_body_bytes", 1000)
    return 1000


def test_max_body_bytes_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ADMIT_MAX_BODY_BYTES", "1234")
    assert Settings().max_body_bytes == 1234
    monkeypatch.delenv("ADMIT_MAX_BODY_BYTES")
    assert Settings().max_body_bytes == 5 * 1024 * 1024


async def test_body_over_limit_with_content_length_is_413(client, world: World, small_limit):
    body = b'{"name": "' + b"x" * small_limit + b'"}'
    response = await client.post(
        TEAMS, content=body, headers={**auth(world.admin), "Content-Type": "application/json"}
    )
    assert response.request.headers["content-length"] == str(len(body))
    assert assert_detail(response, 413) == "Request body is too large."


async def test_body_over_limit_chunked_is_413(client, world: World, small_limit):
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"name": "'
        for _ in range(20):
            yield b"x" * 100
        yield b'"}'

    response = await client.post(
        TEAMS, content=chunks(), headers={**auth(world.admin), "Content-Type": "application/json"}
    )
    assert "content-length" not in response.request.headers
    assert response.request.headers["transfer-encoding"] == "chunked"
    assert assert_detail(response, 413) == "Request body is too large."


async def test_body_at_limit_is_accepted(client, world: World, small_limit):
    prefix, suffix = b'{"name": "', b'"}'
    body = prefix + b"y" * (small_limit - len(prefix) - len(suffix)) + suffix
    assert len(body) == small_limit
    response = await client.post(TEAMS, content=body, headers=auth(world.admin))
    assert response.status_code == 400  # name too long (190): parsed, so not refused for size
    assert "name" in response.json()


async def test_default_limit_refuses_a_huge_body(client, world: World):
    limit = client._transport.app.state.settings.max_body_bytes
    response = await client.post(EVENTS, content=b" " * (limit + 1), headers=auth(world.admin))
    assert_detail(response, 413)


@pytest.mark.parametrize("declared", ["abc", "10", "-1"])
async def test_a_lying_content_length_is_not_trusted(client, world: World, small_limit, declared):
    # The reader counts the bytes it actually receives, whatever length was declared.
    body = b'{"name": "' + b"z" * 2000 + b'"}'
    headers = {**auth(world.admin), "Content-Type": "application/json", "Content-Length": declared}
    response = await client.post(TEAMS, content=body, headers=headers)
    assert response.request.headers["content-length"] == declared
    assert assert_detail(response, 413) == "Request body is too large."


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
     "application/xml", "TEXT/HTML; charset=utf-8"],
)  # fmt: skip
async def test_non_json_content_type_is_415(client, world: World, content_type: str):
    response = await client.post(
        TEAMS, content=b'{"name": "x"}', headers={**auth(world.admin), "Content-Type": content_type}
    )
    detail = assert_detail(response, 415)
    assert detail == f'Unsupported media type "{content_type}" in request.'
    assert await team_count(client, world) == 2


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON"]
)
async def test_json_content_types_are_accepted(client, world: World, content_type: str):
    headers = {**auth(world.admin), "Content-Type": content_type}
    response = await client.post(TEAMS, content=b'{"name": "ok"}', headers=headers)
    assert response.status_code == 201, response.text


async def test_form_post_is_415(client, world: World):
    response = await client.post(TEAMS, data={"name": "x"}, headers=auth(world.admin))
    assert_detail(response, 415)


# -- routing: 404 / 405 -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("DELETE", TEAMS),
        ("PUT", TEAMS),
        ("PATCH", "/api/v1/organizers/"),
        ("POST", "/api/v1/organizers/acme/"),
        ("POST", EVENT),
        ("PATCH", "/api/v1/openapi.json"),
    ],
)
async def test_wrong_method_is_405(client, world: World, method: str, url: str):
    response = await client.request(method, url, headers=auth(world.admin))
    assert assert_detail(response, 405) == f'Method "{method}" not allowed.'
    assert "allow" in {k.lower() for k in response.headers}


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/",
        "/api/v1/nothing/",
        "/api/v1/organizers/acme/teams/1/unknown/",
        "/api/v1/organizers/acme/events/summit/orders-that-do-not-exist/",
        "/api/v2/organizers/",
        "/nothing",
    ],
)
async def test_unknown_url_is_json_404(client, world: World, path: str):
    response = await client.get(path, headers=auth(world.admin))
    assert assert_detail(response, 404) == "Not found."


@pytest.mark.parametrize(
    "team_id",
    ["abc", "1.0", "-1", "0", "1e3", "0x1", "%20", "99999999999999999999999999",
     str(2**63), str(2**62), str(2**31), str(2**31 - 1)],
)  # fmt: skip
async def test_bad_or_unknown_ids_in_paths_are_404(client, world: World, team_id: str):
    for method in ("GET", "PATCH", "PUT", "DELETE"):
        response = await client.request(
            method, f"{TEAMS}{team_id}/", json={"name": "x"}, headers=auth(world.admin)
        )
        assert assert_detail(response, 404) == "Not found.", (method, team_id)
    response = await client.get(f"{TEAMS}{team_id}/tokens/", headers=auth(world.admin))
    assert assert_detail(response, 404) == "Not found."


@pytest.mark.parametrize(
    "spelling",
    ["+{id}", "%20{id}", "{id}%20", "{id}.0", "0_{id}", "{arabic}", "{fullwidth}", "-{id}"],
)
async def test_only_canonical_digits_address_an_object(client, world: World, spelling: str):
    # Like the reference's <int:pk> ([0-9]+): other spellings of an existing id are 404.
    teams = (await client.get(TEAMS, headers=auth(world.admin))).json()["results"]
    team_id = teams[0]["id"]
    ok = await client.get(f"{TEAMS}{team_id}/", headers=auth(world.admin))
    assert ok.status_code == 200
    arabic = "".join(chr(0x0660 + int(d)) for d in str(team_id))
    fullwidth = "".join(chr(0xFF10 + int(d)) for d in str(team_id))
    url = TEAMS + spelling.format(id=team_id, arabic=arabic, fullwidth=fullwidth) + "/"
    response = await client.get(url, headers=auth(world.admin))
    assert assert_detail(response, 404) == "Not found.", url


async def test_bad_id_without_credentials_is_still_401(client):
    response = await client.get(f"{TEAMS}abc/")
    assert_detail(response, 401)


# -- never a 422 --------------------------------------------------------------------------


async def test_no_bad_request_ever_answers_422(client, world: World):
    requests = [
        ("POST", TEAMS, {"content": b"{"}),
        ("POST", TEAMS, {"json": {"name": ["x"]}}),
        ("POST", TEAMS, {"json": {}}),
        ("POST", EVENTS, {"json": {"date_from": 5}}),
        ("PATCH", EVENT, {"json": {"date_from": None, "name": {"en": 5}}}),
        ("PUT", EVENT, {"json": {}}),
        ("GET", f"{EVENTS}?page=x&page_size=y&ordering=z&live=q", {}),
        ("GET", f"{TEAMS}x/", {}),
        ("POST", f"{TEAMS}x/tokens/", {"json": {"name": 1}}),
        ("POST", f"{TEAMS}1/invites/", {"json": {"email": "not-an-email"}}),
        ("POST", f"{TEAMS}1/tokens/", {"json": {"name": ""}}),
    ]
    for method, url, kwargs in requests:
        response = await client.request(method, url, headers=auth(world.admin), **kwargs)
        assert response.status_code != 422, (method, url, response.text)
        assert 400 <= response.status_code < 500, (method, url, response.text)
        assert isinstance(response.json(), dict)


# -- authentication header ----------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["Token", "token", "TOKEN", "ToKeN"])
async def test_authorization_scheme_is_case_insensitive(client, world: World, scheme: str):
    response = await client.get(TEAMS, headers={"Authorization": f"{scheme} {world.admin}"})
    assert response.status_code == 200


async def test_surrounding_whitespace_in_authorization_is_tolerated(client, world: World):
    response = await client.get(TEAMS, headers={"Authorization": f"  Token   {world.admin}  "})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "header",
    ["Bearer {t}", "Device {t}", "Basic {t}", "{t}", "Token", "Token ", "Tokenx {t}",
     "Token {t}x", "Token \u00e9\u00e9"],
)  # fmt: skip
async def test_wrong_scheme_or_token_is_401(client, world: World, header: str):
    response = await client.get(
        TEAMS, headers={"Authorization": header.format(t=world.admin).encode()}
    )
    assert_detail(response, 401)


@pytest.mark.parametrize("header", ["Basic {t}", "Bearer {t}", "Tokenx {t}", "{t}"])
async def test_a_credential_in_the_wrong_scheme_is_told_the_accepted_schemes(
    client, world: World, header: str
):
    response = await client.get(TEAMS, headers={"Authorization": header.format(t=world.admin)})
    assert response.status_code == 401
    detail = response.json()["detail"]
    assert '"Authorization: Token <' in detail, detail
    assert '"Authorization: Device <' in detail, detail


async def test_page_size_zero_negative_or_junk_gives_the_default_page(client, world: World):
    for value in ("0", "-3", "abc", "1e3"):
        response = await client.get(f"{TEAMS}?page_size={value}", headers=auth(world.admin))
        assert response.status_code == 200, (value, response.text)
        body = response.json()
        assert body["count"] >= 2  # else the page size would not show
        assert len(body["results"]) == min(body["count"], 50), value
    one = await client.get(f"{TEAMS}?page_size=1", headers=auth(world.admin))
    assert len(one.json()["results"]) == 1


# -- OpenAPI and docs ---------------------------------------------------------------------


async def test_openapi_is_public_and_documents_bodies(client):
    response = await client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    post = schema["paths"]["/api/v1/organizers/{organizer}/teams/"]["post"]
    ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert ref == "#/components/schemas/TeamIn"
    assert "TeamIn" in schema["components"]["schemas"]
    assert "EventIn" in schema["components"]["schemas"]
    assert schema["components"]["securitySchemes"]["TokenAuth"]["in"] == "header"
    assert not any(path.endswith("/docs") or "openapi" in path for path in schema["paths"])


async def test_openapi_never_advertises_422(client):
    schema = (await client.get("/api/v1/openapi.json")).json()
    statuses = {
        status
        for ops in schema["paths"].values()
        for op in ops.values()
        for status in op.get("responses", {})
    }
    assert "422" not in statuses, "FastAPI's 422 responses leak into the OpenAPI document"


async def test_docs_are_public_and_use_only_local_assets(client):
    response = await client.get("/api/v1/docs")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    assert "/api/v1/openapi.json" in html
    assert "/api/v1/docs/static/swagger-ui-bundle.js" in html
    assert "/api/v1/docs/static/swagger-ui.css" in html
    assert not re.search(r"https?://", html), re.findall(r"https?://[^\s\"']+", html)
    assets = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)
    assert assets
    assert all(a.startswith("/api/v1/docs/") for a in assets), assets
    for asset in assets:
        assert (await client.get(asset)).status_code == 200, asset


async def test_docs_static_assets_are_served(client):
    js = await client.get("/api/v1/docs/static/swagger-ui-bundle.js")
    assert js.status_code == 200
    assert "javascript" in js.headers["content-type"]
    assert len(js.content) > 100_000
    css = await client.get("/api/v1/docs/static/swagger-ui.css")
    assert css.status_code == 200
    assert "text/css" in css.headers["content-type"]
    missing = await client.get("/api/v1/docs/static/nope.js")
    assert missing.status_code == 404
