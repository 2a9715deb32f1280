"""Webhooks ``O/webhooks/`` (declared CRUD; DELETE disables), and Admit's additions:
``rotate_secret``, the delivery log ``calls/`` and ``calls/{call}/redeliver/``.

There is no read permission for organizer settings, so reading takes the same
``organizer.settings.general:write`` as writing (webhooks and their logs are configuration).
The secret appears in the answer of create and ``rotate_secret`` only.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Path
from pydantic import BaseModel
from sqlalchemy import select
from starlette.responses import Response

from admit.db import utcnow
from admit.kit.http.context import OrganizerAccess, OrgContext
from admit.kit.http.errors import not_found
from admit.kit.http.responses import JSONResponse, no_content
from admit.kit.http.routing import API_PREFIX, api_router
from admit.kit.idempotency.secret import secret_bearing
from admit.kit.resources.crud import Page, Resource, flush_guard, mount_crud
from admit.kit.resources.filtering import Filter, FilterSet, Ordering, parse_pk
from admit.kit.resources.pagination import paginate
from admit.models import Webhook, WebhookCall
from admit.webhooks import service
from admit.webhooks.schemas import CallOut, WebhookIn, WebhookOut, WebhookSecretOut

PERMISSION = "organizer.settings.general:write"
CALL_STATUSES = ("pending", "delivered", "failed")

router = api_router()


def _check_status(raw: str) -> str:
    if raw not in CALL_STATUSES:
        raise ValueError(f'"{raw}" is not a valid choice.')
    return raw


def _allow_private(ctx: OrgContext) -> bool:
    return bool(ctx.request.app.state.settings.webhook_allow_private)


class WebhookResource(Resource[Webhook]):
    name = "webhooks"
    path = "/organizers/{organizer}/webhooks"
    model = Webhook
    scope = "organizer"
    read_schema = WebhookOut
    write_schema = WebhookIn
    created_schema = WebhookSecretOut
    read_permission = PERMISSION
    write_permission = PERMISSION
    filters = FilterSet((Filter.boolean("enabled", Webhook.enabled),))
    ordering = Ordering(fields={"id": Webhook.id}, default=("id",), pk=Webhook.id)
    loader_options = service.WEBHOOK_LOAD

    def to_read(self, ctx: OrgContext, obj: Webhook) -> Any:
        return service.webhook_to_read(obj)

    def serialize(self, ctx: OrgContext, obj: Webhook) -> dict[str, Any]:
        body = super().serialize(ctx, obj)
        # Shown once: in the answer to the request that made it.
        if ctx.extra.get("secret_of") == obj.id:
            body["secret"] = obj.secret
        return body

    async def perform_create(self, ctx: OrgContext, data: BaseModel, supplied: set[str]) -> Any:
        assert isinstance(data, WebhookIn)
        webhook = await service.create_webhook(
            ctx.session, ctx.organizer_id, data, allow_private=_allow_private(ctx)
        )
        ctx.extra["secret_of"] = webhook.id
        return webhook

    async def perform_update(
        self, ctx: OrgContext, obj: Webhook, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, WebhookIn)
        await service.update_webhook(
            ctx.session, ctx.organizer_id, obj, data, allow_private=_allow_private(ctx)
        )

    async def perform_delete(self, ctx: OrgContext, obj: Webhook) -> Response:
        await service.disable_webhook(ctx.session, obj)
        return no_content()


webhooks = WebhookResource()
mount_crud(router, webhooks)

Access = Annotated[OrgContext, Depends(OrganizerAccess(PERMISSION))]
WebhookId = Annotated[str, Path(description="The webhook's id")]
CallId = Annotated[str, Path(description="The call's id (from the delivery log)")]
DETAIL = "/organizers/{organizer}/webhooks/{id}"
# The signing secret is shown in these answers only (kit/idempotency/secret).
secret_bearing("POST", f"{API_PREFIX}/organizers/{{organizer}}/webhooks")
secret_bearing("POST", f"{API_PREFIX}{DETAIL}/rotate_secret")


@router.post(f"{DETAIL}/rotate_secret/", tags=["webhooks"], response_model=WebhookSecretOut)
async def rotate_secret(ctx: Access, id: WebhookId) -> Response:
    """A new signing secret, shown in this answer only. The previous secret stays valid for
    24 hours: deliveries carry a signature with each meanwhile."""
    webhook = await webhooks.get_object(ctx, id)
    await flush_guard(service.rotate_secret(ctx.session, webhook, utcnow()))
    ctx.extra["secret_of"] = webhook.id
    return JSONResponse(webhooks.serialize(ctx, webhook))


_calls_filters = FilterSet(
    (Filter.where("status", _check_status, lambda v: WebhookCall.status == v),)
)
_calls_ordering = Ordering(fields={"id": WebhookCall.id}, default=("-id",), pk=WebhookCall.id)


@router.get(f"{DETAIL}/calls/", tags=["webhooks"], response_model=Page[CallOut])
async def list_calls(ctx: Access, id: WebhookId) -> Response:
    """The delivery log, newest first (kept 30 days): what was sent, the receiver's status
    and the first KB of its answer, attempts and the next retry. Query: ``status``
    (pending, delivered, failed), ``page``."""
    webhook = await webhooks.get_object(ctx, id)
    query = select(WebhookCall).where(WebhookCall.webhook_id == webhook.id)
    query = _calls_ordering.apply(_calls_filters.apply(query, ctx.request.query_params), None)
    body = await paginate(
        ctx.request,
        ctx.session,
        query,
        lambda rows: [
            CallOut.model_validate(service.call_to_read(r)).model_dump(mode="json") for r in rows
        ],
    )
    return JSONResponse(body)


@router.post(
    f"{DETAIL}/calls/{{call}}/redeliver/",
    tags=["webhooks"],
    status_code=202,
    response_model=CallOut,
)
async def redeliver_call(ctx: Access, id: WebhookId, call: CallId) -> Response:
    """Sends a delivered or failed call again: 202 with the new log entry (a copy, pending,
    sent after the webhook's calls already waiting). 400 while the call is still pending or
    the webhook is disabled."""
    webhook = await webhooks.get_object(ctx, id)
    row = (
        await ctx.session.execute(
            select(WebhookCall).where(
                WebhookCall.webhook_id == webhook.id, WebhookCall.id == parse_pk(call)
            )
        )
    ).scalar_one_or_none()
    if row is None:
        raise not_found()
    copy = await flush_guard(service.redeliver(ctx.session, webhook, row))
    body = CallOut.model_validate(service.call_to_read(copy)).model_dump(mode="json")
    return JSONResponse(body, status_code=202)
