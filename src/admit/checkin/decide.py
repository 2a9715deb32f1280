"""Whether a scan admits the ticket: every reason of the spec, decided in one documented order.

For a ticket found on the list, in this order (the first that applies answers):

1. nonce replay: a successful check-in with the request's nonce (same device) exists on the
   list: ``ok`` again, nothing new is stored;
2. ``canceled``: the position is canceled or the order is canceled or expired;
3. ``blocked``: the ticket carries a block;
4. ``unapproved``: the order still waits for approval;
5. ``invalid_time`` (entries only): the check-in time is outside ``valid_from``/``valid_until``;
6. ``product``: the product is not on the list, or the ticket is for another date;
7. ``unpaid``: the order is pending, unless it is ``valid_if_pending``, or the list includes
   pending orders and the request sets ``ignore_unpaid``;
8. exits, and forced uploads, are admitted from here on;
9. ``rules``: the list's rules refuse the entry (``error`` when they cannot be evaluated);
10. ``incomplete``: check-in questions are unanswered (unless ``questions_supported`` is false);
11. ``already_redeemed``: the ticket is inside already and the list allows neither multiple
    entries nor (after an exit) re-entry. A list whose ``exit_all_at`` has passed counts
    entries up to that moment as exited even before the periodic job wrote the exits.

``force`` (offline uploads of scans that already happened) skips steps 2-7 and 9-11. Steps
before the ticket is found (``invalid``, ``revoked``, ``ambiguous``) live in ``redeem.py``.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from dataclasses import dataclass

from admit.checkin.jsonlogic import RuleError
from admit.checkin.rows import ListRow, Match, Scan
from admit.checkin.rule_variables import EventDates, History, RuleVars
from admit.checkin.rules import evaluate

LIVE_ORDER_STATES = frozenset({"n", "p"})


@dataclass
class Verdict:
    status: str  # ok, error, incomplete
    reason: str | None = None
    explanation: str | None = None
    # ok: a new check-in to store (False for a nonce replay)
    store: bool = False
    forced: bool = False
    replay: Scan | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def fail(reason: str, explanation: str | None = None) -> Verdict:
    return Verdict("error", reason, explanation)


def nonce_replay(match: Match, nonce: str | None, device_id: int | None) -> Scan | None:
    if not nonce:
        return None
    for scan in match.scans:
        if scan.successful and scan.nonce == nonce and scan.device_id == device_id:
            return scan
    return None


def _local(moment: dt.datetime, timezone: str) -> str:
    try:
        tz = zoneinfo.ZoneInfo(timezone or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        tz = dt.UTC
    return moment.astimezone(tz).strftime("%Y-%m-%d %H:%M")


def inside(scans: list[Scan], listed: ListRow, when: dt.datetime) -> tuple[bool, bool]:
    """(has entered before, is inside now) from the successful check-ins on the list."""
    successful = [s for s in scans if s.successful]
    if not successful:
        return False, False
    last = successful[-1]
    entered = any(s.type == "entry" for s in successful)
    if last.type != "entry":
        return entered, False
    exit_at = listed.exit_all_at
    if exit_at is not None and exit_at <= when and last.datetime <= exit_at:
        return entered, False  # the periodic exit job has not caught up yet
    return entered, True


def entry_refused(match: Match, listed: ListRow, when: dt.datetime) -> bool:
    """Step 11: whether an entry counts as a second entry that is not allowed."""
    if listed.allow_multiple_entries:
        return False
    successful = [s for s in match.scans if s.successful]
    if not successful or all(s.type == "exit" for s in successful):
        return False
    _, now_inside = inside(match.scans, listed, when)
    if not now_inside and listed.allow_entry_after_exit:
        return False
    return True


def rule_dates(match: Match, listed: ListRow) -> EventDates:
    s_from, s_to, s_adm = match.subevent_dates
    if s_from is not None:
        return EventDates(listed.timezone, s_from, s_to, s_adm)
    return EventDates(
        listed.timezone, listed.event_date_from, listed.event_date_to, listed.event_date_admission
    )


def decide(
    match: Match,
    listed: ListRow,
    *,
    kind: str,
    when: dt.datetime,
    force: bool,
    ignore_unpaid: bool,
    nonce: str | None,
    device_id: int | None,
    gate_id: int | None,
    unanswered: bool,
) -> Verdict:
    """Steps 1-11 above for a ticket found on ``listed``."""
    replay = nonce_replay(match, nonce, device_id)
    if replay is not None:
        return Verdict("ok", replay=replay)
    pos = match.position
    if not force:
        if pos["canceled"] or match.order_status not in LIVE_ORDER_STATES:
            return fail("canceled")
        if pos["blocked"]:
            return fail("blocked")
        if match.order_status == "n" and match.order_require_approval:
            return fail("unapproved")
        if kind == "entry":
            valid_from, valid_until = pos["valid_from"], pos["valid_until"]
            if valid_from is not None and valid_from > when:
                return fail(
                    "invalid_time",
                    f"Ticket not valid before {_local(valid_from, listed.timezone)}",
                )
            if valid_until is not None and valid_until < when:
                return fail(
                    "invalid_time",
                    f"Ticket not valid after {_local(valid_until, listed.timezone)}",
                )
        if not listed.all_products and not match.on_list:
            return fail("product")
        if listed.subevent_id is not None and pos["subevent_id"] != listed.subevent_id:
            return fail("product", "Ticket is for another date")
        if match.order_status == "n" and not (
            match.order_valid_if_pending or (listed.include_pending and ignore_unpaid)
        ):
            return fail("unpaid")
    if kind == "exit" or force:
        return Verdict("ok", store=True, forced=force)
    if listed.rules:
        variables = RuleVars(
            now=when,
            dates=rule_dates(match, listed),
            product=pos["item_id"],
            variation=pos["variation_id"],
            gate=gate_id,
            history=History([(s.type, s.datetime) for s in match.scans if s.successful]),
        )
        try:
            passed, why = evaluate(listed.rules, variables)
        except (RuleError, ValueError, TypeError, OverflowError) as exc:
            return fail("error", f"The check-in rules could not be evaluated: {exc}")
        if not passed:
            return fail("rules", why)
    if unanswered:
        return Verdict("incomplete")
    if entry_refused(match, listed, when):
        return fail("already_redeemed")
    return Verdict("ok", store=True)
