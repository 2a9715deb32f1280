"""Check-in lists ``E/checkinlists/`` (CRUD) and ``E/checkinlists/{id}/status/``.

Lists render ``position_count`` (tickets on the list) and ``checkin_count`` (of them, those
checked in at least once) computed for the whole page in two grouped queries; ``exclude=``
leaves either out. Deleting a list deletes its check-ins.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from sqlalchemy import Select, and_, delete, func, insert, or_, select, tuple_
from sqlalchemy.orm import aliased
from starlette.responses import Response

from admit.checkin.access import CONFIGURE, READ, AnyEventPermission
from admit.checkin.jsonlogic import RuleError
from admit.checkin.rules import validate as validate_rules
from admit.checkin.schemas import CheckinListIn, CheckinListOut
from admit.kit.http.context import EventAccess, EventContext, OrgContext
from admit.kit.http.errors import FieldErrors
from admit.kit.http.responses import JSONResponse
from admit.kit.resources.crud import Resource
from admit.kit.resources.filtering import Filter, FilterSet, Ordering, parse_datetime, parse_int
from admit.kit.resources.pagination import paginate
from admit.models import (
    Checkin,
    CheckinList,
    Gate,
    Item,
    Order,
    OrderPosition,
    SubEvent,
    checkin_list_gates,
    checkin_list_items,
)

E = "/organizers/{organizer}/events/{event}"
SCALARS = (
    "name all_products include_pending allow_multiple_entries allow_entry_after_exit "
    "exit_all_at addon_match ignore_in_statistics consider_tickets_used rules"
).split()


def invalid_pk(pk: object) -> str:
    return f'Invalid pk "{pk}" - object does not exist.'


def _subevent_match(value: int) -> Any:
    return or_(CheckinList.subevent_id == value, CheckinList.subevent_id.is_(None))


def _ends_after(value: Any) -> Any:
    ends = select(func.coalesce(SubEvent.date_to, SubEvent.date_from)).where(
        SubEvent.id == CheckinList.subevent_id
    )
    return or_(CheckinList.subevent_id.is_(None), ends.scalar_subquery() >= value)


FILTERS = FilterSet(
    (
        Filter.eq("subevent", CheckinList.subevent_id, parse_int),
        Filter.where("subevent_match", parse_int, _subevent_match),
        Filter.where("ends_after", parse_datetime, _ends_after),
    )
)
_ListSubEvent = aliased(SubEvent)
ORDERING = Ordering(
    fields={
        "id": CheckinList.id,
        "name": CheckinList.name,
        "subevent__date_from": _ListSubEvent.date_from,
    },
    default=("subevent__date_from", "name"),
    pk=CheckinList.id,
)


async def load_links(ctx: OrgContext, ids: Sequence[int]) -> tuple[dict, dict]:
    """Products and gates of the lists, by list id."""
    items: dict[int, list[int]] = defaultdict(list)
    gates: dict[int, list[int]] = defaultdict(list)
    if ids:
        rows = await ctx.session.execute(
            select(checkin_list_items.c.list_id, checkin_list_items.c.item_id)
            .where(checkin_list_items.c.list_id.in_(ids))
            .order_by(checkin_list_items.c.item_id)
        )
        for list_id, item_id in rows:
            items[list_id].append(item_id)
        rows = await ctx.session.execute(
            select(checkin_list_gates.c.list_id, checkin_list_gates.c.gate_id)
            .where(checkin_list_gates.c.list_id.in_(ids))
            .order_by(checkin_list_gates.c.gate_id)
        )
        for list_id, gate_id in rows:
            gates[list_id].append(gate_id)
    return items, gates


def on_list_joined() -> Any:
    """The ticket-on-list condition for a join of lists (``CheckinList``) and positions."""
    products = or_(
        CheckinList.all_products.is_(True),
        OrderPosition.item_id.in_(
            select(checkin_list_items.c.item_id).where(
                checkin_list_items.c.list_id == CheckinList.id
            )
        ),
    )
    date = or_(
        CheckinList.subevent_id.is_(None), OrderPosition.subevent_id == CheckinList.subevent_id
    )
    status = or_(
        Order.status == "p",
        and_(
            Order.status == "n",
            or_(CheckinList.include_pending.is_(True), Order.valid_if_pending.is_(True)),
        ),
    )
    return and_(
        OrderPosition.event_id == CheckinList.event_id,
        OrderPosition.canceled.is_(False),
        products,
        date,
        status,
    )


def entered_joined(ids: Sequence[int]) -> Any:
    """The joined position has a successful entry on the joined list (of ``ids``): one hashed
    set of (position, list) pairs, however often a ticket entered."""
    return tuple_(OrderPosition.id, CheckinList.id).in_(
        select(Checkin.position_id, Checkin.list_id).where(
            Checkin.list_id.in_(ids), Checkin.successful.is_(True), Checkin.type == "entry"
        )
    )


async def load_counts(
    ctx: OrgContext, ids: Sequence[int], wanted: set[str]
) -> dict[str, dict[int, int]]:
    """Per list: its tickets (``position_count``) and those with a successful entry on it
    (``checkin_count``), both from one scan of the event's positions and orders. A list and a
    position meet once in the join (a position has one order), so rows are counted as they
    are; the entries are one hashed set of (position, list) pairs, not a join that would
    repeat a position entering twice."""
    counts: dict[str, dict[int, int]] = {}
    if not ids or not wanted & {"position_count", "checkin_count"}:
        return counts
    query = (
        select(CheckinList.id, func.count(), func.count().filter(entered_joined(ids)))
        .select_from(CheckinList)
        .join(OrderPosition, OrderPosition.event_id == CheckinList.event_id)
        .join(Order, Order.id == OrderPosition.order_id)
        .where(CheckinList.id.in_(ids), on_list_joined())
        .group_by(CheckinList.id)
    )
    rows = (await ctx.session.execute(query)).all()
    if "position_count" in wanted:
        counts["position_count"] = {list_id: n for list_id, n, _ in rows}
    if "checkin_count" in wanted:
        counts["checkin_count"] = {list_id: n for list_id, _, n in rows if n}
    return counts


def list_to_read(
    obj: CheckinList, items: list[int], gates: list[int], counts: dict[str, dict[int, int]]
) -> dict[str, Any]:
    data = {name: getattr(obj, name) for name in SCALARS}
    data.update(
        id=obj.id,
        subevent=obj.subevent_id,
        limit_products=items,
        gates=gates,
        rules=dict(obj.rules or {}),
    )
    for key in ("position_count", "checkin_count"):
        if key in counts:
            data[key] = counts[key].get(obj.id, 0)
    return data


def _excluded(ctx: OrgContext) -> set[str]:
    return set(ctx.request.query_params.getlist("exclude"))


class CheckinLists(Resource[CheckinList]):
    name = "checkinlists"
    path = f"{E}/checkinlists"
    model = CheckinList
    read_schema = CheckinListOut
    write_schema = CheckinListIn
    read_permission = READ[0]
    write_permission = CONFIGURE
    filters = FILTERS
    ordering = ORDERING
    tag = "checkin"

    def access(self, permission: str | None) -> EventAccess:
        if permission == CONFIGURE:
            return EventAccess(CONFIGURE)
        return AnyEventPermission(*READ)

    def list_query(self, ctx: OrgContext) -> Select[Any]:
        query = self.base_query(ctx).outerjoin(
            _ListSubEvent, _ListSubEvent.id == CheckinList.subevent_id
        )
        query = self.filters.apply(query, ctx.request.query_params)
        return ORDERING.apply(query, ctx.request)

    def serialize_many(self, ctx: OrgContext, objs: Sequence[CheckinList]) -> list[dict[str, Any]]:
        items, gates, counts = ctx.extra["links"]
        out = []
        for obj in objs:
            data = list_to_read(obj, items.get(obj.id, []), gates.get(obj.id, []), counts)
            body = CheckinListOut.model_validate(data).model_dump(mode="json")
            for key in ("position_count", "checkin_count"):
                if key not in counts:
                    body.pop(key)
            out.append(body)
        return out

    def serialize(self, ctx: OrgContext, obj: CheckinList) -> dict[str, Any]:
        return self.serialize_many(ctx, [obj])[0]

    async def _links(self, ctx: OrgContext, objs: Sequence[CheckinList]) -> None:
        ids = [o.id for o in objs]
        items, gates = await load_links(ctx, ids)
        wanted = {"position_count", "checkin_count"} - _excluded(ctx)
        ctx.extra["links"] = (items, gates, await load_counts(ctx, ids, wanted))

    async def handle_list(self, ctx: OrgContext) -> Response:
        body = await paginate(ctx.request, ctx.session, self.list_query(ctx), list)
        await self._links(ctx, body["results"])
        body["results"] = self.serialize_many(ctx, body["results"])
        await _expand_subevents(ctx, body["results"])
        return JSONResponse(body)

    async def get_object(self, ctx: OrgContext, raw_pk: str) -> CheckinList:
        obj = await super().get_object(ctx, raw_pk)
        await self._links(ctx, [obj])
        return obj

    async def get_bare(self, ctx: OrgContext, raw_pk: str) -> CheckinList:
        """The list (404 as ever) without what only its own rendering needs: its ticket
        and check-in counts cost two scans of the event's tickets."""
        return await super().get_object(ctx, raw_pk)

    async def handle_retrieve(self, ctx: OrgContext, pk: str) -> Response:
        body = self.serialize(ctx, await self.get_object(ctx, pk))
        await _expand_subevents(ctx, [body])
        return JSONResponse(body)

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: CheckinList | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, CheckinListIn) and isinstance(ctx, EventContext)
        await validate_list(ctx, data)

    def apply(self, ctx: OrgContext, obj: CheckinList, data: BaseModel, supplied: set[str]) -> None:
        assert isinstance(data, CheckinListIn)
        for name in SCALARS:
            setattr(obj, name, getattr(data, name))
        obj.subevent_id = data.subevent

    async def perform_create(self, ctx: OrgContext, data: BaseModel, supplied: set[str]) -> Any:
        obj = await super().perform_create(ctx, data, supplied)
        await _replace_links(ctx, obj, data)  # type: ignore[arg-type]
        return obj

    async def perform_update(
        self, ctx: OrgContext, obj: CheckinList, data: BaseModel, supplied: set[str]
    ) -> None:
        await super().perform_update(ctx, obj, data, supplied)
        await _replace_links(ctx, obj, data)  # type: ignore[arg-type]


async def _replace_links(ctx: OrgContext, obj: CheckinList, data: CheckinListIn) -> None:
    session = ctx.session
    await session.execute(delete(checkin_list_items).where(checkin_list_items.c.list_id == obj.id))
    await session.execute(delete(checkin_list_gates).where(checkin_list_gates.c.list_id == obj.id))
    if data.limit_products:
        await session.execute(
            insert(checkin_list_items),
            [{"list_id": obj.id, "item_id": i} for i in data.limit_products],
        )
    if data.gates:
        await session.execute(
            insert(checkin_list_gates), [{"list_id": obj.id, "gate_id": g} for g in data.gates]
        )


async def validate_list(ctx: EventContext, data: CheckinListIn) -> None:
    """References must lie in this event (gates in this organizer); rules must evaluate."""
    errors: dict[str, list[str]] = {}
    session = ctx.session
    if data.limit_products:
        found = set(
            await session.scalars(
                select(Item.id).where(
                    Item.event_id == ctx.event.id, Item.id.in_(data.limit_products)
                )
            )
        )
        missing = [pk for pk in data.limit_products if pk not in found]
        if missing:
            errors["limit_products"] = [invalid_pk(pk) for pk in missing]
    if data.subevent is not None:
        found_sub = await session.scalar(
            select(SubEvent.id).where(
                SubEvent.id == data.subevent, SubEvent.event_id == ctx.event.id
            )
        )
        if found_sub is None:
            errors["subevent"] = [invalid_pk(data.subevent)]
    if data.gates:
        found = set(
            await session.scalars(
                select(Gate.id).where(
                    Gate.organizer_id == ctx.organizer_id, Gate.id.in_(data.gates)
                )
            )
        )
        missing = [pk for pk in data.gates if pk not in found]
        if missing:
            errors["gates"] = [invalid_pk(pk) for pk in missing]
    try:
        validate_rules(data.rules)
    except RuleError as exc:
        errors["rules"] = [str(exc)]
    if errors:
        raise FieldErrors(errors)
    if data.subevent is not None and not ctx.event.has_subevents:
        raise FieldErrors.single("subevent", "The event is not an event series.")


async def _expand_subevents(ctx: OrgContext, bodies: list[dict[str, Any]]) -> None:
    if "subevent" not in ctx.request.query_params.getlist("expand"):
        return
    from admit.checkin.expand import expand

    assert isinstance(ctx, EventContext)
    await expand(ctx, ctx.event, bodies, {"subevent"})


checkin_lists = CheckinLists()
