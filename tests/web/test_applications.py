"""Own applications on the settings pages, authorized applications with revoke, the invite
page, and the admin CLI."""

from __future__ import annotations

import json
import re

from sqlalchemy import select
from typer.testing import CliRunner

from admit.models import OAuthApplication, TeamInvite, team_members
from tests.oauth.helpers import PASSWORD, bearer_token, csrf, login, make_app


async def test_create_show_secret_once_rotate_and_delete(web, factory, alice):
    await login(web, alice.email)
    page = await web.get("/settings/apps/new")
    bad = await web.post(
        "/settings/apps/new",
        data={"csrf_token": csrf(page.text), "name": "Sync", "redirect_uris": "http://x.example/"},
    )
    assert bad.status_code == 400 and "use https" in bad.text
    created = await web.post(
        "/settings/apps/new",
        data={
            "csrf_token": csrf(page.text),
            "name": "Sync",
            "redirect_uris": "https://sync.example/cb\nhttp://127.0.0.1:9000/cb\n",
        },
    )
    assert created.status_code == 201
    secret = re.search(r'<code id="client-secret">(\w+)</code>', created.text).group(1)
    client_id = re.search(r'<code id="client-id">(\w+)</code>', created.text).group(1)
    async with factory.sessionmaker() as session:
        app = (await session.execute(select(OAuthApplication))).scalar_one()
    assert app.client_id == client_id and app.secret_hash != secret and len(secret) == 64
    assert app.redirect_uris == ["https://sync.example/cb", "http://127.0.0.1:9000/cb"]
    detail = await web.get(f"/settings/apps/{app.id}/")
    assert client_id in detail.text and secret not in detail.text
    rotated = await web.post(
        f"/settings/apps/{app.id}/secret", data={"csrf_token": csrf(detail.text)}
    )
    new_secret = re.search(r'<code id="client-secret">(\w+)</code>', rotated.text).group(1)
    assert new_secret != secret
    deleted = await web.post(
        f"/settings/apps/{app.id}/delete", data={"csrf_token": csrf(detail.text)}
    )
    assert deleted.status_code == 303
    assert (await web.get(f"/settings/apps/{app.id}/")).status_code == 404


async def test_someone_elses_application_is_not_found(web, factory, alice):
    bob = await factory.user("bob@example.org", password=PASSWORD)
    app = await make_app(factory, owner=bob)
    await login(web, alice.email)
    assert (await web.get(f"/settings/apps/{app.id}/")).status_code == 404
    page = await web.get("/settings/apps/new")
    response = await web.post(
        f"/settings/apps/{app.id}/delete", data={"csrf_token": csrf(page.text)}
    )
    assert response.status_code == 404


async def test_authorized_applications_can_be_revoked(web, api, factory, world, alice):
    await factory.team(world.org, members=[alice], event_permissions=["event.orders:read"])
    app = await make_app(factory, name="CRM connector")
    token = await bearer_token(factory, app, alice, [world.org])
    url = f"/api/v1/organizers/{world.org.slug}/events/"
    assert (await api.get(url, headers={"Authorization": f"Bearer {token}"})).status_code == 200
    await login(web, alice.email)
    page = await web.get("/settings/")
    assert "CRM connector" in page.text
    response = await web.post(
        f"/settings/authorized/{app.id}/revoke", data={"csrf_token": csrf(page.text)}
    )
    assert response.status_code == 303
    after = (await web.get("/settings/")).text
    assert "Access of CRM connector was revoked." in after
    assert "<strong>CRM connector</strong>" not in after
    assert (await api.get(url, headers={"Authorization": f"Bearer {token}"})).status_code == 401


async def _invite(factory, world, email: str) -> tuple[int, str]:
    team = await factory.team(world.org, name="Box office")
    async with factory.sessionmaker() as session:
        invite = TeamInvite(team_id=team.id, email=email, token="t" * 32)
        session.add(invite)
        await session.commit()
    return team.id, "t" * 32


async def test_invite_creates_an_account_and_joins(web, factory, world):
    team_id, token = await _invite(factory, world, "new@example.org")
    page = await web.get(f"/invite/{token}/")
    assert page.status_code == 200 and "Box office" in page.text
    response = await web.post(
        f"/invite/{token}/",
        data={
            "csrf_token": csrf(page.text),
            "action": "register",
            "fullname": "New Person",
            "password": "a fine password",
            "password2": "a fine password",
        },
    )
    assert response.status_code == 303
    assert (await web.get("/settings/")).status_code == 200
    async with factory.sessionmaker() as session:
        members = (await session.execute(select(team_members))).all()
    assert [m.team_id for m in members] == [team_id]
    assert (await web.get(f"/invite/{token}/")).status_code == 404  # single use


async def test_invite_joins_a_logged_in_user_and_expires(
    web, factory, world, alice, clean_app, monkeypatch
):
    _, token = await _invite(factory, world, "someone@example.org")
    await login(web, alice.email)
    page = await web.get(f"/invite/{token}/")
    assert f"Join as {alice.email}" in page.text
    monkeypatch.setattr(clean_app.state.settings, "invite_days", 0.0000001)
    assert (await web.get(f"/invite/{token}/")).status_code == 410
    monkeypatch.setattr(clean_app.state.settings, "invite_days", 14.0)
    response = await web.post(
        f"/invite/{token}/", data={"csrf_token": csrf(page.text), "action": "join"}
    )
    assert response.status_code == 303


def test_cli_oauth_app(tmp_path, monkeypatch):
    from admit.cli import app as cli
    from admit.migrate import upgrade

    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.sqlite3'}"
    upgrade(url)
    monkeypatch.setenv("ADMIT_DATABASE_URL", url)
    monkeypatch.setenv("ADMIT_DATA_DIR", str(tmp_path))
    runner = CliRunner()
    result = runner.invoke(
        cli,
        ["oauth-app", "create", "Sync", "--redirect-uri", "https://a.example/cb",
         "--redirect-uri", "http://localhost:8080/cb", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    created = json.loads(result.output.strip().splitlines()[-1])
    assert set(created) == {"client_id", "client_secret"} and len(created["client_secret"]) == 64
    listed = runner.invoke(cli, ["oauth-app", "list"])
    assert created["client_id"] in listed.output
    rotated = runner.invoke(cli, ["oauth-app", "rotate-secret", created["client_id"], "--json"])
    assert (
        json.loads(rotated.output.strip().splitlines()[-1])["client_secret"]
        != created["client_secret"]
    )
    bad = runner.invoke(cli, ["oauth-app", "create", "X", "--redirect-uri", "ftp://x/"])
    assert bad.exit_code == 1
    assert runner.invoke(cli, ["oauth-app", "delete", created["client_id"]]).exit_code == 0
    assert runner.invoke(cli, ["oauth-app", "delete", created["client_id"]]).exit_code == 1
