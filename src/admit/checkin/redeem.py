"""``POST O/checkinrpc/redeem/``: check a scanned ticket in (or out).

Before the ticket is known (``decide.py`` takes over once it is):

* the request must name lists of this organizer the caller may scan on, one per event
  (else 400 ``{"lists": [...]}``);
* the secret is looked up in the events of those lists: no ticket there but a ticket whose
  earlier secret it was gives ``revoked`` (a forced upload checks that ticket in); nothing
  at all gives ``invalid`` (HTTP 404 with ``detail``); tickets in two events give
  ``ambiguous``;
* on a list with ``addon_match`` whose products do not include the scanned ticket's, the
  ticket and its add-ons are narrowed to those on the list: one is taken, none goes on to
  ``product``, several give ``ambiguous``;
* answers sent for check-in questions are stored first (they stay even when the scan fails).

Every failed scan is stored as an unsuccessful check-in with its reason (unknown secrets with
no position, on the first list). Statuses: ``ok`` 201, ``incomplete`` 400, ``invalid`` 404,
any other error 200. On PostgreSQL a first entry costs two statements (authentication and
``fastpath.py``), any other successful scan three (authentication, the lookup of
``lookup.py``, the insert of ``store.py``); each is one autocommit statement on the native
pool, which no request holds while it computes or renders.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import select
from starlette.responses import Response

from admit.checkin import fastpath, lookup, questions
from admit.checkin.access import may_scan, scan_events
from admit.checkin.decide import Verdict, decide
from admit.checkin.expand import expand, requested
from admit.checkin.render import checkin_texts, new_scan, position_body, require_attention
from admit.checkin.rows import Found, ListRow, Match
from admit.checkin.schemas import RedeemIn
from admit.checkin.store import NewCheckin, insert_scan
from admit.db import utcnow
from admit.kit.http.context import OrgContext
from admit.kit.http.errors import FieldErrors
from admit.kit.http.responses import JSONResponse
from admit.kit.http.transaction import commit
from admit.models import Event, OrderPosition, RevokedSecret, checkin_list_items

log = logging.getLogger("admit")
STATUS_CODES = {"ok": 201, "incomplete": 400}
# How often a redeem re-reads and decides again after losing a race for the same ticket.
MAX_ATTEMPTS = 8


def invalid_pk(pk: object) -> str:
    return f'Invalid pk "{pk}" - object does not exist.'


@dataclass(frozen=True)
class Scanner:
    """Who scans: the device (and its gate) for a device token, nobody for a team token."""

    device_id: int | None
    device_number: int | None
    gate_id: int | None

    @property
    def triple(self) -> tuple[int | None, int | None, int | None]:
        return (self.device_id, self.device_number, self.gate_id)

    @classmethod
    def of(cls, ctx: OrgContext) -> Scanner:
        device = getattr(ctx.request.state, "device", None)
        return cls(
            device_id=ctx.principal.device_id,
            device_number=getattr(device, "device_id", None),
            gate_id=getattr(device, "gate_id", None),
        )


def check_lists(ctx: OrgContext, wanted: list[int], found: list[Found]) -> None:
    """400 for a list that does not exist here, may not be scanned, or shares its event."""
    by_id = {f.list.id: f.list for f in found if may_scan(ctx, f.list.event_id)}
    missing = [pk for pk in wanted if pk not in by_id]
    if missing:
        raise FieldErrors({"lists": [invalid_pk(pk) for pk in missing]})
    events = [row.event_id for row in by_id.values()]
    if len(set(events)) != len(events):
        raise FieldErrors.single("lists", "Each check-in list must belong to a different event.")


class Redeem:
    def __init__(self, ctx: OrgContext, data: RedeemIn) -> None:
        self.ctx = ctx
        self.data = data
        self.scanner = Scanner.of(ctx)
        self.now = utcnow()
        self.when = data.datetime or self.now
        self.expand = requested(ctx)  # validated before anything is stored

    async def find(self, secret: str, lists: list[int] | None = None) -> list[Found]:
        return await lookup.find(
            self.ctx.session, self.ctx.organizer_id, secret, lists or self.data.lists,
            self.data.nonce,
        )  # fmt: skip

    @classmethod
    def recorded(cls, data: RedeemIn, scanner: Scanner, when: dt.datetime) -> Redeem:
        """The redeem a stored answer's recipe describes (``keyed.py``), to render that answer
        again: without a request context, so it must read and expand nothing (it renders
        only admitted first entries of the lane, which takes no ``expand``)."""
        redeem = cls.__new__(cls)
        redeem.ctx = cast(OrgContext, None)
        redeem.data, redeem.scanner = data, scanner
        redeem.now = redeem.when = when
        redeem.expand = set()
        return redeem

    def fast_entry(self) -> bool:
        """Whether the scan goes through ``fastpath.py`` (which admits plain first entries)."""
        data = self.data
        return bool(
            self.ctx.session.info["fast"].native
            and len(data.lists) == 1
            and data.type == "entry"
            and not data.force
        )

    async def scan_fast(self, keyed: fastpath.Keyed | None = None) -> fastpath.Outcome:
        """The lookup rows, and the id of the first entry written if one was (with the
        scan's idempotency key and its recipe, for a ``keyed`` scan)."""
        data = self.data
        return await fastpath.find_and_admit(
            self.ctx.session.info["fast"],
            organizer_id=self.ctx.organizer_id,
            list_id=data.lists[0],
            allowed_events=scan_events(self.ctx),
            scan=fastpath.Scan(
                secret=data.secret,
                nonce=data.nonce,
                at=self.when,
                created=self.now,
                device=self.scanner.device_id,
                number=self.scanner.device_number,
                gate=self.scanner.gate_id,
                source=data.source_type,
                questions=data.questions_supported,
                keyed=keyed,
            ),
        )

    async def run(self) -> Response:
        data = self.data
        if self.fast_entry():
            found, admitted = await self.scan_fast()
        else:
            found, admitted = await self.find(data.secret), None
        check_lists(self.ctx, data.lists, found)
        if admitted is not None:
            return await self.admitted(found[0], admitted)
        first = next(f.list for f in found if f.list.id == self.data.lists[0])
        matches = [f for f in found if f.match is not None]
        if len(matches) > 1:
            return await self.refuse(first, None, Verdict("error", "ambiguous"))
        if not matches:
            return await self.unknown(found, first)
        return await self.known(matches[0], forced_secret=False)

    async def admitted(self, hit: Found, new_id: int) -> Response:
        """The fast path wrote the first entry (``fastpath.py``); answer as the general path
        would have."""
        listed, match = hit.list, hit.match
        assert match is not None
        verdict = self.verdict(match, listed, unanswered=False)
        if not (verdict.ok and verdict.store):  # cannot happen: the fast path is stricter
            log.error("fast path admitted ticket %s that the decision refuses", match.id)
            verdict = Verdict("ok", store=True)
        match.scans.append(new_scan(new_id, "entry", self.when, self.scanner.triple, 1))
        return await self.respond(listed, match, verdict)

    def verdict(
        self, match: Match, listed: ListRow, *, unanswered: bool, forced: bool = False
    ) -> Verdict:
        return decide(
            match,
            listed,
            kind=self.data.type,
            when=self.when,
            force=self.data.force or forced,
            ignore_unpaid=self.data.ignore_unpaid,
            nonce=self.data.nonce,
            device_id=self.scanner.device_id,
            gate_id=self.scanner.gate_id,
            unanswered=unanswered,
        )

    async def unknown(self, found: list[Found], first: ListRow) -> Response:
        revoked = await self.ctx.session.execute(
            select(OrderPosition.secret)
            .join(RevokedSecret, RevokedSecret.position_id == OrderPosition.id)
            .where(
                RevokedSecret.secret == self.data.secret,
                RevokedSecret.event_id.in_([f.list.event_id for f in found]),
            )
            .limit(1)
        )
        current = revoked.scalar()
        if current is not None:
            again = [f for f in await self.find(current) if f.match is not None]
            if again:
                if self.data.force:
                    return await self.known(again[0], forced_secret=True)
                return await self.refuse(again[0].list, again[0].match, Verdict("error", "revoked"))
        return await self.refuse(first, None, Verdict("error", "invalid"))

    async def known(self, hit: Found, *, forced_secret: bool) -> Response:
        listed, match = hit.list, hit.match
        assert match is not None
        if listed.addon_match and not listed.all_products and not match.on_list:
            narrowed = await self.addon_match(listed, match)
            if isinstance(narrowed, Verdict):
                return await self.refuse(listed, match, narrowed)
            if narrowed is not None:
                listed, match = narrowed.list, narrowed.match
                assert match is not None
        entry = self.data.type == "entry"
        ask = entry and self.data.questions_supported and not self.data.force
        open_questions: list[Any] = []
        if ask and (self.data.answers or match.missing_questions):
            session = self.ctx.session
            item_questions = await questions.checkin_questions(session, match.position["item_id"])
            answered_now: set[int] = set()
            if self.data.answers and item_questions:
                answered_now = await questions.save_given(
                    session, match.id, match.position["item_id"], item_questions, self.data.answers
                )
                # Kept whatever the scan's outcome; the lookup reads them on its own connection.
                await commit(session)
                again = await self.find(match.position["secret"], [listed.id])
                if again and again[0].match is not None:
                    match = again[0].match
            open_questions = questions.unanswered(item_questions, match.answers, answered_now)
        for _attempt in range(MAX_ATTEMPTS):
            verdict = self.verdict(
                match, listed, unanswered=bool(open_questions), forced=forced_secret
            )
            if verdict.status == "incomplete":
                return await self.respond(listed, match, verdict, open_questions)
            if not verdict.ok:
                return await self.refuse(listed, match, verdict)
            if not verdict.store:
                return await self.respond(listed, match, verdict)
            stored = await self.admit(listed, match, verdict)
            if stored is not None:
                return await self.respond(listed, stored, verdict)
            # Another scan of this ticket got in first: read again and decide again.
            again = [f for f in await self.find(match.position["secret"], [listed.id])]
            match = again[0].match if again and again[0].match else match
        return await self.refuse(
            listed, match, Verdict("error", "error", "The ticket is being scanned elsewhere.")
        )

    async def addon_match(self, listed: ListRow, match: Match) -> Found | Verdict | None:
        """The one ticket among the scanned one and its add-ons that is on the list."""
        on_list = select(checkin_list_items.c.item_id).where(
            checkin_list_items.c.list_id == listed.id
        )
        query = select(OrderPosition.secret).where(
            OrderPosition.addon_to_id == match.id,
            OrderPosition.canceled.is_(False),
            OrderPosition.item_id.in_(on_list),
        )
        if listed.subevent_id is not None:
            query = query.where(OrderPosition.subevent_id == listed.subevent_id)
        secrets = list(await self.ctx.session.scalars(query))
        if len(secrets) > 1:
            return Verdict("error", "ambiguous")
        if not secrets:
            return None
        again = [f for f in await self.find(secrets[0], [listed.id]) if f.match is not None]
        return again[0] if again else None

    def new_checkin(self, listed: ListRow, match: Match | None, **fields: Any) -> NewCheckin:
        return NewCheckin(
            event_id=listed.event_id,
            list_id=listed.id,
            position_id=match.id if match else None,
            type=self.data.type,
            datetime=self.when,
            created=self.now,
            nonce=self.data.nonce,
            device_id=self.scanner.device_id,
            device_number=self.scanner.device_number,
            gate_id=self.scanner.gate_id,
            raw_barcode=self.data.secret,
            raw_source_type=self.data.source_type,
            **fields,
        )

    async def admit(self, listed: ListRow, match: Match, verdict: Verdict) -> Match | None:
        """Stores the check-in; None when the ticket's next ``seq`` was taken meanwhile."""
        seq = max((s.seq or 0 for s in match.scans), default=0) + 1
        new = self.new_checkin(listed, match, seq=seq, successful=True, forced=verdict.forced)
        new_id = await insert_scan(self.ctx.session, new)
        if new_id is None:
            return None
        match.scans.append(new_scan(new_id, self.data.type, self.when, self.scanner.triple, seq))
        match.scans.sort(key=lambda s: (s.datetime, s.id))
        return match

    async def refuse(self, listed: ListRow, match: Match | None, verdict: Verdict) -> Response:
        """Stores the failed scan (once per nonce and reason) and answers."""
        repeated = (
            match is not None
            and self.data.nonce is not None
            and any(
                not s.successful and s.nonce == self.data.nonce and s.error_reason == verdict.reason
                for s in match.scans
            )
        )
        if not repeated:
            failed = self.new_checkin(
                listed,
                match,
                seq=None,
                successful=False,
                error_reason=verdict.reason,
                error_explanation=verdict.explanation,
            )
            await insert_scan(self.ctx.session, failed)
        return await self.respond(listed, match, verdict)

    async def respond(
        self,
        listed: ListRow,
        match: Match | None,
        verdict: Verdict,
        open_questions: list[Any] | None = None,
    ) -> Response:
        locale = match.order_locale if match and self.data.use_order_locale else None
        body: dict[str, Any] = {"status": verdict.status}
        if verdict.status == "error":
            body["reason"] = verdict.reason
            body["reason_explanation"] = verdict.explanation
        body["require_attention"] = require_attention(match) if match else False
        body["checkin_texts"] = checkin_texts(match, locale) if match else []
        body["position"] = position_body(match, listed.id) if match else None
        body["list"] = listed.summary()
        if verdict.status == "incomplete":
            item_id = match.position["item_id"] if match else 0
            body["questions"] = [questions.question_out(q, [item_id]) for q in open_questions or []]
        if match is not None and body["position"] is not None:
            if self.expand:
                event = await self.ctx.session.get(Event, listed.event_id)
                assert event is not None
                await expand(self.ctx, event, [body["position"]], self.expand)
        status = STATUS_CODES.get(verdict.status, 200)
        if verdict.reason == "invalid":
            status = 404
            body = {"detail": "Not found.", **body}
        return JSONResponse(body, status_code=status)
