"""Edit pages for the API's declared resources (``kit.resources.crud.Resource``): a list, a
form to create one, a form to edit one, and on an object's page its children (a product's
variations, a question's options) each as its own small form.

An :class:`Area` names the resource, the form's fields and the list's columns; the pages run
the resource's own handlers (``prepare`` + ``handle_list`` / ``handle_create`` /
``handle_update``) with the form as their JSON body, so the API's validation, references,
locks and notifications apply unchanged and its messages are shown by the fields. Pages are
guarded by the resource's own read and write permissions.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter
from starlette.responses import Response

from admit.control.access import control_page
from admit.control.api_call import Errors, answer, run, with_body
from admit.control.fields import Field, defaults, to_body, to_form, typed
from admit.control.history import audit_history, object_history
from admit.control.nav import event_nav, event_url, organizer_nav
from admit.control.render import render, text_of
from admit.kit.http.context import EventAccess, EventContext, OrgContext
from admit.kit.http.errors import APIError, FieldErrors
from admit.kit.resources.crud import MOUNTED, Resource
from admit.web.forms import Pairs
from admit.web.page import Page

EVENT = "/control/event/{organizer}/{event}"
FieldsOf = Callable[[EventContext], Awaitable[list[Field]]]
Column = tuple[str, Callable[[dict[str, Any]], Any]]


def fixed(fields: list[Field]) -> FieldsOf:
    async def get(_ctx: EventContext) -> list[Field]:
        return fields

    return get


@dataclass
class Child:
    """Objects under one of the area's (``items/{item}/variations``), edited on its page."""

    key: str
    title: str
    resource: Resource[Any]
    fields: list[Field] | FieldsOf  # fixed, or with choices read from the event
    label: Callable[[dict[str, Any]], str]
    # A form field whose chosen value names the object (an add-on's category): its label.
    label_field: str = ""

    async def fields_of(self, ctx: EventContext) -> list[Field]:
        return self.fields if isinstance(self.fields, list) else await self.fields(ctx)

    def label_of(self, row: dict[str, Any], fields: list[Field]) -> str:
        chosen = next((f for f in fields if f.name == self.label_field), None)
        if chosen is not None:
            value = str(row.get(chosen.name))
            return next((text for v, text in chosen.choices if v == value), value)
        return self.label(row)

    @property
    def deletable(self) -> bool:
        return "delete" in self.resource.actions


@dataclass
class Area:
    key: str  # the URL's part: …/{key}/
    title: str
    singular: str
    resource: Resource[Any]
    fields: FieldsOf
    columns: list[Column]
    children: list[Child] = field(default_factory=list)
    list_page: bool = True  # False: another module shows the list (products, quotas)
    menu: str = ""
    create_only: list[Field] = field(default_factory=list)  # fields the API reads on create
    # The notifications' payload key naming this kind of object (``item``): its page shows
    # the object's history.
    history_key: str = ""
    # Or the audit log's ``object_type`` of this kind of object (``audit/log.py``).
    audit_type: str = ""
    # The API's create route, where it is not the resource's own (vouchers).
    creator: Callable[[EventContext], Awaitable[Response]] | None = None
    extra: Callable[[EventContext, dict[str, Any]], Awaitable[dict[str, Any]]] | None = None

    @property
    def deletable(self) -> bool:
        return "delete" in self.resource.actions

    @property
    def read_access(self) -> EventAccess:
        return EventAccess(self.resource.read_permission)

    @property
    def write_access(self) -> EventAccess:
        return EventAccess(self.resource.write_permission)

    def base(self, ctx: EventContext) -> str:
        return f"{event_url(ctx.organizer_slug, ctx.event.slug)}{self.key}/"


def tz(ctx: EventContext) -> str:
    return ctx.event.timezone or "UTC"


async def listed(ctx: OrgContext, resource: Resource[Any], query: str = "",
                 params: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    """The API's list answer (50 a page) for the query string ``query``."""
    req = with_body(ctx, None, "GET", query)
    await resource.prepare_read(req, params or {})
    return answer(await resource.handle_list(req))


async def one(ctx: OrgContext, resource: Resource[Any], pk: str,
              params: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    req = with_body(ctx, None, "GET")
    await resource.prepare_read(req, params or {})
    return answer(await resource.handle_retrieve(req, pk))


async def found(ctx: OrgContext, resource: Resource[Any], pk: str) -> dict[str, Any] | None:
    """The object as the API's GET answers it; None when the event has no such one."""
    try:
        return await one(ctx, resource, pk)
    except (APIError, FieldErrors):
        return None


async def found_child(
    ctx: EventContext, resource: Resource[Any], parent: str, pk: str
) -> dict[str, Any] | None:
    try:
        return await one(ctx, resource, pk, {resource.parent_param or "": parent})
    except (APIError, FieldErrors):
        return None


def resource(name: str) -> Resource[Any]:
    """The API's mounted resource called ``name``."""
    return next(r for r in MOUNTED if r.name == name)


def no_such(page: Page, what: str) -> Response:
    """The 404 page of an organizer-level object that is not there (or another organizer's)."""
    return render(page, "forbidden.html", 404, nav=None, detail=f"There is no such {what}.")


async def list_page(page: Page, ctx: OrgContext, res: Resource[Any], template: str, menu: str,
                    base: str, **more: Any) -> Response:  # fmt: skip
    """An organizer-level list: the API's list answer for the page's query string, 50 a page."""
    body = await listed(ctx, res, page.request.url.query)
    return render(page, template, nav=await organizer_nav(page, ctx, menu), rows=body["results"],
                  count=body["count"], base=base, next=body.get("next"),
                  previous=body.get("previous"), **more)  # fmt: skip


async def missing(page: Page, ctx: EventContext, area: Area) -> Response:
    return render(page, "forbidden.html", 404, nav=await event_nav(page, ctx, area.key),
                  detail=f"There is no such {area.singular} in this event.")  # fmt: skip


def mount(router: APIRouter, area: Area) -> None:
    """Adds the area's pages to ``router``."""
    path = f"{EVENT}/{area.key}"
    res = area.resource
    # A resource created or changed by a route of its own must say so (``creator``): the
    # generic handler would skip that route's rules.
    if (area.creator is None and "create" not in res.actions) or "update" not in res.actions:
        raise ValueError(f"{res.name}: the API does not create/update it through the resource")

    async def form_page(page: Page, ctx: EventContext, obj: dict[str, Any] | None,
                        values: dict[str, Any], errors: Errors, status: int = 200,
                        failed: str = "", child_values: dict[str, Any] | None = None
                        ) -> Response:  # fmt: skip
        fields = await area.fields(ctx) + ([] if obj else area.create_only)
        children = []
        if obj is not None:
            for child in area.children:
                params = {child.resource.parent_param or "": str(obj["id"])}
                rows = (await listed(ctx, child.resource, "", params))["results"]
                cfields = await child.fields_of(ctx)
                forms = [(str(r["id"]), child.label_of(r, cfields), to_form(cfields, r, tz(ctx)))
                         for r in rows]  # fmt: skip
                children.append({"child": child, "fields": cfields, "forms": forms,
                                 "defaults": defaults(cfields)})  # fmt: skip
        more = await area.extra(ctx, obj or {}) if area.extra else {}
        if obj is not None:
            named = (
                obj.get("name")
                or obj.get("question")
                or obj.get("code")
                or obj.get("internal_name")
            )
            more["heading"] = text_of(named) or f"#{obj['id']}"
            if area.history_key:
                more["history"] = await object_history(ctx, area.history_key, obj["id"])
            elif area.audit_type:
                more["history"] = await audit_history(ctx, area.audit_type, obj["id"])
        return render(page, "area_form.html", status, nav=await event_nav(page, ctx, area.menu
                      or area.key), area=area, base=area.base(ctx), obj=obj, fields=fields,
                      values=values, errors=errors, children=children, failed=failed,
                      child_values=child_values or {}, **more)  # fmt: skip

    if area.list_page:

        async def list_page(page: Page, ctx: EventContext) -> Response:
            query = page.request.url.query
            body = await listed(ctx, res, query)
            rows = [(r["id"], [fn(r) for _, fn in area.columns]) for r in body["results"]]
            may_write = ctx.has_event_permission(ctx.event.id, res.write_permission or "")
            more = await area.extra(ctx, {}) if area.extra else {}
            return render(page, "area_list.html", nav=await event_nav(page, ctx, area.key),
                          area=area, base=area.base(ctx), rows=rows, count=body["count"],
                          column_names=[h for h, _ in area.columns], may_write=may_write,
                          next=body.get("next"), previous=body.get("previous"),
                          asked=dict(page.request.query_params), **more)  # fmt: skip

        list_page.__name__ = f"{area.key}_list"
        router.add_api_route(path + "/", control_page(area.read_access)(list_page),
                             methods=["GET"])  # fmt: skip

    async def new_page(page: Page, ctx: EventContext) -> Response:
        fields = await area.fields(ctx) + area.create_only
        return await form_page(page, ctx, None, defaults(fields), {})

    async def create(page: Page, ctx: EventContext, pairs: Pairs) -> Response:
        fields = await area.fields(ctx) + area.create_only
        body = to_body(fields, pairs, tz(ctx))

        async def work() -> Any:
            req = with_body(ctx, body)
            if area.creator is not None:
                return await area.creator(req)
            await res.prepare(req, {})
            return await res.handle_create(req)

        created, errors = await run(page, ctx, work)
        if errors:
            return await form_page(page, ctx, None, typed(fields, pairs), errors, 400)
        page.web.flash(f"The {area.singular} was created.")
        return page.redirect(f"{area.base(ctx)}{created['id']}/")

    async def edit_page(page: Page, ctx: EventContext, id: str) -> Response:
        obj = await found(ctx, res, id)
        if obj is None:
            return await missing(page, ctx, area)
        return await form_page(page, ctx, obj, to_form(await area.fields(ctx), obj, tz(ctx)), {})

    async def update(page: Page, ctx: EventContext, pairs: Pairs, id: str) -> Response:
        fields = await area.fields(ctx)
        obj = await found(ctx, res, id)
        if obj is None:
            return await missing(page, ctx, area)
        body = to_body(fields, pairs, tz(ctx), obj)

        async def work() -> Any:
            req = with_body(ctx, body, "PATCH")
            await res.prepare(req, {"id": id})
            return await res.handle_update(req, id, partial=True)

        _, errors = await run(page, ctx, work)
        if errors:
            return await form_page(page, ctx, obj, typed(fields, pairs), errors, 400)
        page.web.flash(f"The {area.singular} was saved.")
        return page.redirect(f"{area.base(ctx)}{id}/")

    for name, handler, suffix, method, form in (
        ("new", new_page, "/new", "GET", False),
        ("create", create, "/new", "POST", True),
        ("edit", edit_page, "/{id}/", "GET", False),
        ("update", update, "/{id}/", "POST", True),
    ):
        handler.__name__ = f"{area.key}_{name}"
        router.add_api_route(path + suffix, control_page(area.write_access, form=form)(handler),
                             methods=[method])  # fmt: skip
    for child in area.children:
        _mount_child(router, area, child, form_page)


def _mount_child(router: APIRouter, area: Area, child: Child, form_page: Any) -> None:
    """``…/{key}/{id}/{child}/new`` and ``…/{key}/{id}/{child}/{cid}/`` (POST only)."""
    res = child.resource
    parent = res.parent_param or ""

    async def save(page: Page, ctx: EventContext, pairs: Pairs, id: str, cid: str = "") -> Response:
        current = None
        if cid:
            current = await found_child(ctx, res, id, cid)
            if current is None:
                return await missing(page, ctx, area)
        cfields = await child.fields_of(ctx)
        body = to_body(cfields, pairs, tz(ctx), current)

        async def work() -> Any:
            req = with_body(ctx, body, "PATCH" if cid else "POST")
            await res.prepare(req, {parent: id, "id": cid})
            if cid:
                return await res.handle_update(req, cid, partial=True)
            return await res.handle_create(req)

        obj = await found(ctx, area.resource, id)
        if obj is None:
            return await missing(page, ctx, area)
        _, errors = await run(page, ctx, work)
        if errors:
            values = to_form(await area.fields(ctx), obj, tz(ctx))
            return await form_page(page, ctx, obj, values, errors, 400,
                                   failed=f"{child.key}-{cid or 'new'}",
                                   child_values=typed(cfields, pairs))  # fmt: skip
        page.web.flash(f"The {child.title.lower()} were saved.")
        return page.redirect(f"{area.base(ctx)}{id}/")

    async def add(page: Page, ctx: EventContext, pairs: Pairs, id: str) -> Response:
        return await save(page, ctx, pairs, id)

    async def change(page: Page, ctx: EventContext, pairs: Pairs, id: str, cid: str) -> Response:
        return await save(page, ctx, pairs, id, cid)

    async def remove(page: Page, ctx: EventContext, id: str, cid: str) -> Response:
        """Deletes the child (the API's DELETE); a refusal is shown by its form."""
        obj = await found(ctx, area.resource, id)
        current = await found_child(ctx, res, id, cid)
        if obj is None or current is None:
            return await missing(page, ctx, area)

        async def work() -> Any:
            req = with_body(ctx, None, "DELETE")
            await res.prepare(req, {parent: id, "id": cid})
            return await res.handle_delete(req, cid)

        _, errors = await run(page, ctx, work)
        if errors:
            cfields = await child.fields_of(ctx)
            values = to_form(await area.fields(ctx), obj, tz(ctx))
            return await form_page(page, ctx, obj, values, errors, 400,
                                   failed=f"{child.key}-{cid}",
                                   child_values=to_form(cfields, current, tz(ctx)))  # fmt: skip
        page.web.flash(f"{child.label_of(current, await child.fields_of(ctx))} was deleted.")
        return page.redirect(f"{area.base(ctx)}{id}/")

    base = f"{EVENT}/{area.key}/{{id}}/{child.key}"
    handlers: list[tuple[Any, str, str]] = [(add, "/new", "add"), (change, "/{cid}/", "change")]
    if child.deletable:
        handlers.append((remove, "/{cid}/delete", "delete"))
    for handler, suffix, name in handlers:
        handler.__name__ = f"{area.key}_{child.key}_{name}"
        router.add_api_route(base + suffix, control_page(area.write_access, form=True)(handler),
                             methods=["POST"])  # fmt: skip
