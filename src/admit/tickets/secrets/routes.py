"""``E/revokedsecrets/`` and ``E/blockedsecrets/``: the lists a scanner syncs to check signed
secrets offline.

- revoked secrets (``id``, ``secret``, ``created``): secrets replaced by a new one or of
  canceled tickets; filter ``created_since``; ordering ``created`` / ``secret`` (default
  ``-created``);
- blocked secrets (``id``, ``secret``, ``blocked``, ``updated``): one row per secret, kept with
  ``blocked: false`` once the block is lifted; filters ``updated_since`` and ``blocked``;
  ordering ``updated`` / ``secret`` / ``id`` (default ``-updated``).

Both answer ``X-Page-Generated`` (``kit/stamps/page.py``), the bound a device passes back as
``created_since`` / ``updated_since`` next time, and are readable by whoever may read the
event's orders or scan them (devices with the scanner security profiles included).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel
from starlette.responses import Response

from admit.kit.http.context import AnyEventPermission, OrgContext
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.resources.crud import Resource, mount_crud
from admit.kit.resources.filtering import Filter, FilterSet, Ordering, parse_datetime
from admit.kit.resources.pagination import paginate
from admit.kit.stamps.page import header_value, page_generated
from admit.models import BlockedSecret, RevokedSecret
from admit.tickets.secrets import hooks, settings_keys

# Reading orders or scanning them (devices hold ``event.orders:checkin``).
READ = ("event.orders:read", "event.orders:checkin", "event.orders:write")

router = api_router()


class RevokedSecretOut(BaseModel):
    id: int
    secret: str
    created: dt.datetime


class BlockedSecretOut(BaseModel):
    id: int
    secret: str
    blocked: bool
    updated: dt.datetime


class _SyncList(Resource[Any]):
    """A list a device syncs incrementally: the page's bound is taken before it is read."""

    actions = frozenset({"list"})  # devices sync the lists; single rows serve nobody
    tag = "check-in"
    read_permission = READ[0]

    def access(self, permission: str | None) -> AnyEventPermission:
        return AnyEventPermission(*READ)

    async def handle_list(self, ctx: OrgContext) -> Response:
        generated = header_value(await page_generated(ctx.session))
        body = await paginate(
            ctx.request,
            ctx.session,
            self.list_query(ctx),
            lambda rows: self.serialize_many(ctx, rows),
        )
        return JSONResponse(body, headers={"X-Page-Generated": generated})


class RevokedSecrets(_SyncList):
    name = "revokedsecrets"
    path = "/organizers/{organizer}/events/{event}/revokedsecrets"
    model = RevokedSecret
    read_schema = RevokedSecretOut
    filters = FilterSet(
        (Filter.where("created_since", parse_datetime, lambda v: RevokedSecret.created >= v),)
    )
    ordering = Ordering(
        fields={"created": RevokedSecret.created, "secret": RevokedSecret.secret},
        default=("-created",),
        pk=RevokedSecret.id,
    )

    def to_read(self, ctx: OrgContext, obj: RevokedSecret) -> Any:
        return {"id": obj.id, "secret": obj.secret, "created": obj.created}


class BlockedSecrets(_SyncList):
    name = "blockedsecrets"
    path = "/organizers/{organizer}/events/{event}/blockedsecrets"
    model = BlockedSecret
    read_schema = BlockedSecretOut
    filters = FilterSet(
        (
            Filter.where("updated_since", parse_datetime, lambda v: BlockedSecret.updated >= v),
            Filter.boolean("blocked", BlockedSecret.blocked),
        )
    )
    ordering = Ordering(
        fields={
            "updated": BlockedSecret.updated,
            "secret": BlockedSecret.secret,
            "id": BlockedSecret.id,
        },
        default=("-updated",),
        pk=BlockedSecret.id,
    )

    def to_read(self, ctx: OrgContext, obj: BlockedSecret) -> Any:
        return {"id": obj.id, "secret": obj.secret, "blocked": obj.blocked, "updated": obj.updated}


mount_crud(router, RevokedSecrets())
mount_crud(router, BlockedSecrets())

hooks.register()
settings_keys.register()
