"""``…/checkin/``: the event's check-in lists with their counts (the API's list counts), a
search for tickets (the API's position search) and a button that checks one in by hand
through the redeem service itself (``checkin.redeem.Redeem``), so the list's rules, the
ticket's state and its check-in questions apply exactly as at the doors; open questions are
asked on the page and sent again with the answers. The latest scans are listed below."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter
from sqlalchemy import select
from starlette.responses import Response

from admit.checkin.access import READ, SCAN
from admit.checkin.lists import load_counts
from admit.checkin.redeem import Redeem
from admit.checkin.schemas import RedeemIn
from admit.control.access import control_page
from admit.control.nav import event_nav
from admit.control.render import render, text_of
from admit.kit.http.context import AnyEventPermission, EventContext
from admit.kit.http.errors import FieldErrors
from admit.kit.resources.crud import validate_input
from admit.models import Checkin, CheckinList, Item, Order, OrderPosition
from admit.orders.filters import POSITION_FILTERS
from admit.web.forms import Pairs, first
from admit.web.page import Page

router = APIRouter(include_in_schema=False)
CHECKIN = "/control/event/{organizer}/{event}/checkin"
RESULTS = 20
HISTORY = 20
REASONS = {
    "invalid": "This ticket is not known.",
    "unpaid": "The order is not paid.",
    "canceled": "The ticket or its order is canceled.",
    "already_redeemed": "This ticket has already been checked in.",
    "product": "This list does not take tickets of this product.",
    "rules": "The list's check-in rules refuse this ticket now.",
    "revoked": "This ticket's code was replaced by a newer one.",
    "blocked": "This ticket is blocked.",
    "invalid_time": "This ticket is not valid at this time.",
    "ambiguous": "More than one ticket matches.",
    "unapproved": "The order is not approved.",
}


async def _lists(ctx: EventContext) -> list[dict[str, Any]]:
    rows = list(
        await ctx.session.execute(
            select(CheckinList.id, CheckinList.name)
            .where(CheckinList.event_id == ctx.event.id)
            .order_by(CheckinList.id)
        )
    )
    counts = await load_counts(ctx, [r[0] for r in rows], {"position_count", "checkin_count"})
    return [
        {
            "id": list_id,
            "name": name,
            "tickets": counts.get("position_count", {}).get(list_id, 0),
            "checked_in": counts.get("checkin_count", {}).get(list_id, 0),
        }
        for list_id, name in rows
    ]


async def _tickets(ctx: EventContext, search: str) -> list[dict[str, Any]]:
    """Tickets of the event the API's position search finds (name, e-mail, code, secret)."""
    query = (
        select(
            OrderPosition.id,
            OrderPosition.secret,
            OrderPosition.attendee_name_cached,
            OrderPosition.positionid,
            Order.code,
            Order.status,
            Item.name,
        )
        .join(Order, Order.id == OrderPosition.order_id)
        .join(Item, Item.id == OrderPosition.item_id)
        .where(OrderPosition.event_id == ctx.event.id, OrderPosition.canceled.is_(False))
    )
    query = POSITION_FILTERS.apply(query, {"search": search})
    rows = await ctx.session.execute(
        query.order_by(Order.code, OrderPosition.positionid).limit(RESULTS)
    )
    return [
        {"id": r.id, "secret": r.secret, "name": r.attendee_name_cached, "positionid": r.positionid,
         "code": r.code, "status": r.status, "item": text_of(r.name)}
        for r in rows
    ]  # fmt: skip


async def _history(ctx: EventContext) -> list[dict[str, Any]]:
    """The event's latest scans, admitted or refused, newest first (the API's history rows)."""
    rows = await ctx.session.execute(
        select(
            Checkin.datetime,
            Checkin.type,
            Checkin.successful,
            Checkin.error_reason,
            Checkin.device_id,
            CheckinList.name,
            OrderPosition.attendee_name_cached,
            OrderPosition.positionid,
            Order.code,
        )
        .join(CheckinList, CheckinList.id == Checkin.list_id)
        .outerjoin(OrderPosition, OrderPosition.id == Checkin.position_id)
        .outerjoin(Order, Order.id == OrderPosition.order_id)
        .where(Checkin.event_id == ctx.event.id)
        .order_by(Checkin.datetime.desc(), Checkin.id.desc())
        .limit(HISTORY)
    )
    return [
        {**row._asdict(), "reason": REASONS.get(row.error_reason or "", row.error_reason or "")}
        for row in rows
    ]


async def _page(page: Page, ctx: EventContext, *, status: int = 200, **extra: Any) -> Response:
    search = page.request.query_params.get("search", "").strip()[:200]
    context: dict[str, Any] = {"search": search, "tickets": [], "result": None, "errors": {}}
    context.update(extra)
    if context["search"] and not context["tickets"]:
        context["tickets"] = await _tickets(ctx, context["search"])
    return render(
        page,
        "checkin.html",
        status,
        nav=await event_nav(page, ctx, "checkin"),
        lists=await _lists(ctx),
        history=await _history(ctx),
        may_scan=any(ctx.has_event_permission(ctx.event.id, p) for p in SCAN),
        **context,
    )


@router.get(CHECKIN + "/")
@control_page(AnyEventPermission(*READ))
async def checkin_page(page: Page, ctx: EventContext) -> Response:
    return await _page(page, ctx)


def _answers(pairs: Pairs) -> dict[str, str]:
    return {k.removeprefix("answer_"): v for k, v in pairs if k.startswith("answer_") and v}


@router.post(CHECKIN + "/redeem")
@control_page(AnyEventPermission(*SCAN), form=True)
async def checkin_redeem(page: Page, ctx: EventContext, pairs: Pairs) -> Response:
    """Checks a ticket in on a list, as a scanner would (the redeem service's answer)."""
    raw = {
        "secret": first(pairs, "secret"),
        "lists": [first(pairs, "list")],
        "source_type": "manual",
        "answers": _answers(pairs),
        "questions_supported": True,
    }
    search = first(pairs, "search")
    try:
        data: RedeemIn = validate_input(RedeemIn, raw)  # type: ignore[assignment]
        answer = await Redeem(ctx, data).run()
    except FieldErrors as exc:
        errors = {k: [str(m) for m in v] for k, v in dict(exc.errors).items()}  # type: ignore[call-overload]
        return await _page(page, ctx, status=400, errors=errors, search=search)
    body = json.loads(bytes(answer.body))
    result = {
        "status": body.get("status"),
        "text": REASONS.get(body.get("reason") or "", body.get("reason_explanation") or ""),
        "name": (body.get("position") or {}).get("attendee_name"),
        "order": (body.get("position") or {}).get("order"),
        "questions": [
            {
                **q,
                "question": text_of(q["question"]),
                "options": [{**o, "answer": text_of(o["answer"])} for o in q["options"]],
            }
            for q in body.get("questions", [])
        ],
        "secret": raw["secret"],
        "list": first(pairs, "list"),
    }
    if result["status"] == "ok":
        page.web.flash(f"Checked in: {result['name'] or 'the ticket'} (order {result['order']}).")
        target = f"/control/event/{ctx.organizer_slug}/{ctx.event.slug}/checkin/"
        return page.redirect(target + ("?" + urlencode({"search": search}) if search else ""))
    return await _page(page, ctx, status=200 if result["status"] == "incomplete" else 400,
                       result=result, search=search)  # fmt: skip
