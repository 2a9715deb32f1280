"""Teams, their members, invites and API tokens (organizer permission ``organizer.teams:write``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from sqlalchemy import Select, delete, select
from sqlalchemy.orm import selectinload
from starlette.responses import Response

from admit.kit.http.body import read_object
from admit.kit.http.context import OrgContext, public_base_url
from admit.kit.http.errors import not_found
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.http.routing import API_PREFIX, api_router
from admit.kit.idempotency.secret import secret_bearing
from admit.kit.openapi import responses as documented
from admit.kit.openapi.query import O
from admit.kit.resources.crud import Resource, flush_guard, mount_crud, validate_input
from admit.kit.resources.filtering import Ordering, parse_pk
from admit.models import Team, TeamAPIToken, TeamInvite, User, team_members
from admit.teams import service
from admit.teams.schemas import (
    InviteIn,
    InviteOut,
    MemberOut,
    TeamIn,
    TeamOut,
    TokenCreated,
    TokenIn,
    TokenOut,
)

# A token is deactivated, not deleted: the answer shows it.
documented.document({("DELETE", f"{O}/teams/{{team}}/tokens/{{id}}/"): ("200", TokenOut)})

PERMISSION = "organizer.teams:write"
router = api_router()
# A new token is shown in its creation's answer only (kit/idempotency/secret).
secret_bearing("POST", f"{API_PREFIX}/organizers/{{organizer}}/teams/{{team}}/tokens")


class TeamResource(Resource[Team]):
    name = "teams"
    path = "/organizers/{organizer}/teams"
    model = Team
    scope = "organizer"
    read_schema = TeamOut
    write_schema = TeamIn
    read_permission = PERMISSION
    write_permission = PERMISSION
    ordering = Ordering(fields={"id": Team.id, "name": Team.name}, default=("id",), pk=Team.id)
    loader_options = (selectinload(Team.limit_events),)

    def to_read(self, ctx: OrgContext, obj: Team) -> Any:
        return service.team_to_read(obj)

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: Team | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, TeamIn)
        service.check_permission_style(data, supplied)

    async def perform_create(self, ctx: OrgContext, data: BaseModel, supplied: set[str]) -> Team:
        assert isinstance(data, TeamIn)
        events = await service.resolve_events(ctx.session, ctx.organizer_id, data.limit_events)
        team = Team(organizer_id=ctx.organizer_id)
        service.apply_team(team, data, supplied, events)
        ctx.session.add(team)
        await ctx.session.flush()
        return team

    async def perform_update(
        self, ctx: OrgContext, obj: Team, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, TeamIn)
        events = await service.resolve_events(ctx.session, ctx.organizer_id, data.limit_events)
        service.apply_team(obj, data, supplied, events)
        await ctx.session.flush()


class TeamChild(Resource[Any]):
    """Base for resources nested under ``/teams/{team}/``: 404 when the team is missing."""

    scope = "organizer"
    parent_param = "team"
    tag = "teams"
    read_permission = PERMISSION
    write_permission = PERMISSION

    async def resolve_parent(self, ctx: OrgContext, value: str) -> Team:
        team = (
            await ctx.session.execute(
                select(Team).where(
                    Team.id == parse_pk(value), Team.organizer_id == ctx.organizer_id
                )
            )
        ).scalar_one_or_none()
        if team is None:
            raise not_found()
        return team

    def team(self, ctx: OrgContext) -> Team:
        return ctx.extra["parent"]


class MemberResource(TeamChild):
    name = "team-members"
    path = "/organizers/{organizer}/teams/{team}/members"
    model = User
    read_schema = MemberOut
    actions = frozenset({"list", "retrieve", "delete"})
    ordering = Ordering(fields={"id": User.id}, default=("id",), pk=User.id)

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        return (
            select(User)
            .join(team_members, team_members.c.user_id == User.id)
            .where(team_members.c.team_id == self.team(ctx).id)
        )

    async def perform_delete(self, ctx: OrgContext, obj: User) -> Response:
        await ctx.session.execute(
            delete(team_members).where(
                team_members.c.team_id == self.team(ctx).id, team_members.c.user_id == obj.id
            )
        )
        return no_content()


class InviteResource(TeamChild):
    name = "team-invites"
    path = "/organizers/{organizer}/teams/{team}/invites"
    model = TeamInvite
    read_schema = InviteOut
    write_schema = InviteIn
    actions = frozenset({"list", "retrieve", "create", "delete"})
    ordering = Ordering(fields={"id": TeamInvite.id}, default=("id",), pk=TeamInvite.id)

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        return select(TeamInvite).where(TeamInvite.team_id == self.team(ctx).id)

    async def handle_create(self, ctx: OrgContext) -> Response:
        data = validate_input(InviteIn, await read_object(ctx.request))
        assert isinstance(data, InviteIn)
        invitation, email = await flush_guard(
            service.invite(ctx.session, self.team(ctx), data.email, public_base_url(ctx.request))
        )
        if invitation is None:
            # An existing account joined directly: no invite, so no id (as the reference).
            return JSONResponse({"email": email}, status_code=201)
        return JSONResponse(InviteOut.model_validate(invitation).model_dump(), status_code=201)


class TokenResource(TeamChild):
    name = "team-tokens"
    path = "/organizers/{organizer}/teams/{team}/tokens"
    model = TeamAPIToken
    read_schema = TokenOut
    write_schema = TokenIn
    actions = frozenset({"list", "retrieve", "create", "delete"})
    ordering = Ordering(fields={"id": TeamAPIToken.id}, default=("id",), pk=TeamAPIToken.id)

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        return select(TeamAPIToken).where(TeamAPIToken.team_id == self.team(ctx).id)

    async def handle_create(self, ctx: OrgContext) -> Response:
        data = validate_input(TokenIn, await read_object(ctx.request))
        assert isinstance(data, TokenIn)
        token, secret = service.new_token(self.team(ctx), data.name)
        ctx.session.add(token)
        await ctx.session.flush()
        body = TokenCreated(id=token.id, name=token.name, active=token.active, token=secret)
        return JSONResponse(body.model_dump(), status_code=201)

    async def perform_delete(self, ctx: OrgContext, obj: TeamAPIToken) -> Response:
        # Tokens are disabled, never removed, and can never be activated again.
        obj.active = False
        await ctx.session.flush()
        return JSONResponse(TokenOut.model_validate(obj).model_dump())


for resource in (TeamResource(), MemberResource(), InviteResource(), TokenResource()):
    mount_crud(router, resource)
