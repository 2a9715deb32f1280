"""``expand=``: replacing the ids of a subevent, item, variation or answer question inside a
rendered object by the full object, serialised by the resource that owns it (one query per
kind, whatever the number of objects rendered)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select

from admit.kit.http.context import EventContext, OrgContext
from admit.kit.http.errors import FieldErrors
from admit.models import Event, Item, ItemVariation, Question, SubEvent

KINDS = frozenset({"subevent", "item", "variation", "answers.question"})


def requested(ctx: OrgContext, allowed: frozenset[str] = KINDS) -> set[str]:
    wanted = set(ctx.request.query_params.getlist("expand"))
    unknown = wanted - allowed
    if unknown:
        raise FieldErrors.single(
            "expand",
            f'"{sorted(unknown)[0]}" cannot be expanded. Choose from: '
            + ", ".join(sorted(allowed))
            + ".",
        )
    return wanted


def event_context(ctx: OrgContext, event: Event) -> EventContext:
    return EventContext(
        request=ctx.request,
        session=ctx.session,
        principal=ctx.principal,
        organizer_id=ctx.organizer_id,
        organizer_slug=ctx.organizer_slug,
        grants=ctx.grants,
        event=event,
    )


async def expand(
    ctx: OrgContext, event: Event, bodies: Iterable[dict[str, Any]], wanted: set[str]
) -> None:
    """Expands, in place, the position bodies of one event."""
    bodies = list(bodies)
    if not wanted or not bodies:
        return
    ectx = event_context(ctx, event)
    session = ctx.session
    if "subevent" in wanted:
        from admit.subevents.routes import LOAD, SubEventResource

        ids = {b["subevent"] for b in bodies if b.get("subevent")}
        if ids:
            resource = SubEventResource()
            rows = await session.scalars(
                select(SubEvent)
                .where(SubEvent.id.in_(ids), SubEvent.event_id == event.id)
                .options(*LOAD)
            )
            found = {s.id: resource.serialize(ectx, s) for s in rows}
            for body in bodies:
                body["subevent"] = found.get(body.get("subevent"), body.get("subevent"))
    if "item" in wanted or "variation" in wanted:
        await _items(ectx, bodies, wanted)
    if "answers.question" in wanted:
        from admit.catalog.questions.routes import QuestionResource

        ids = {a["question"] for b in bodies for a in b.get("answers", [])}
        if ids:
            resource = QuestionResource()
            rows = await session.scalars(
                select(Question)
                .where(Question.id.in_(ids), Question.event_id == event.id)
                .options(*resource.loader_options)
            )
            found = {q.id: resource.serialize(ectx, q) for q in rows}
            for body in bodies:
                for answer in body.get("answers", []):
                    answer["question"] = found.get(answer["question"], answer["question"])


async def _items(ectx: EventContext, bodies: list[dict[str, Any]], wanted: set[str]) -> None:
    from admit.catalog.items.nested_routes import VariationResource
    from admit.catalog.items.routes import ItemResource

    session = ectx.session
    from admit.catalog.items import item_service

    items_resource = ItemResource()
    # What ``to_read`` needs (``prepare`` leaves it out of GETs, which the renderer answers).
    ectx.extra["tax_rates"] = await item_service.tax_rates(session, ectx.event.id)
    item_ids = {b["item"] for b in bodies if isinstance(b.get("item"), int)}
    rows = await session.scalars(
        select(Item)
        .where(Item.id.in_(item_ids), Item.event_id == ectx.event.id)
        .options(*items_resource.loader_options)
    )
    items = {i.id: i for i in rows}
    if "variation" in wanted:
        variation_resource = VariationResource()
        ids = {b["variation"] for b in bodies if isinstance(b.get("variation"), int)}
        variations = {
            v.id: v
            for v in await session.scalars(select(ItemVariation).where(ItemVariation.id.in_(ids)))
            if v.item_id in items
        }
        for body in bodies:
            variation = variations.get(body.get("variation"))
            if variation is not None:
                ectx.extra["parent"] = items[variation.item_id]
                body["variation"] = variation_resource.serialize(ectx, variation)
    if "item" in wanted:
        for body in bodies:
            item = items.get(body.get("item"))
            if item is not None:
                body["item"] = items_resource.serialize(ectx, item)
