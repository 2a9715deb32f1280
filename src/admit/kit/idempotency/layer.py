"""``X-Idempotency-Key``: a retried write is answered from the first attempt, not repeated.

An edge layer (``app.EDGE_LAYERS``). A request without the header, or with a safe method,
passes straight through: one scan of the header list. A keyed POST/PUT/PATCH/DELETE:

* the key is bound to the credential (a hash of the ``Authorization`` header: a token is a
  credential, and only its holder can replay its answers; without one, of the cookies;
  without either, of the client's address, so callers without credentials do not share one
  namespace of keys), the method, the path with its query and a hash of the body;
* routes whose answer carries a secret (``idempotency_secret``) refuse keys with 400: their
  answers are never stored;
* the key is claimed (``idempotency_store``) by the path that runs the request, just before
  it changes anything (:func:`settle`): the framework (``AdmitAPI.framework``), a lane that
  commits in groups (``idempotency_lane``), or a lane statement that writes the key's row
  itself together with its change (``idempotency_inline``: the cart sale; and a first
  entry at the doors, ``checkin/keyed.py``; both cost no statement more). Taken by an
  identical request that finished: its stored status, headers and body are replayed, with
  ``Idempotent-Replayed: true``. Still running: 409. Taken by a different request: 409
  naming what differs;
* otherwise the request runs with the claim in its scope, and its whole answer is captured
  before anything is sent. The transaction that makes the change writes the answer into the
  claimed row before it commits: ``kit/http/transaction.db_session`` hands its session to this
  layer instead of committing, the lanes' keyed requests commit in groups, and the cart
  sale's call writes row and answer at once. A request that changed nothing (refused access,
  invalid input, answered before anything claimed its key) has its answer stored on its
  own. Answers that a retry should not get (5xx, 429, anything with ``Retry-After``) are not
  kept: the claim is released and the same key may be sent again.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from sqlalchemy.exc import DBAPIError
from starlette.types import ASGIApp, Receive, Scope, Send

from admit.config import Settings
from admit.kit.http.captured import Captured
from admit.kit.http.errors import busy_error
from admit.kit.http.headers import client_address
from admit.kit.http.transaction import commit, run_after_commit
from admit.kit.idempotency import secret, store
from admit.kit.idempotency.secret import bears_secret
from admit.kit.lanes.fastlane import read_body, replay

log = logging.getLogger("admit")

HEADER = b"x-idempotency-key"
_REPLAYED = ("idempotent-replayed", "true")
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_KEY = 200


def _valid_key(raw: bytes) -> str | None:
    key = raw.decode("latin-1").strip()
    if not 0 < len(key) <= MAX_KEY or not key.isprintable():
        return None
    return key


def _credential(scope: Scope, settings: Settings | None = None) -> str:
    found = b""
    cookie = b""
    for name, value in scope["headers"]:
        if name == b"authorization":
            found = b"authorization:" + value
        elif name == b"cookie":
            cookie = b"cookie:" + value
    if not (found or cookie):
        # The same address as the rate limits and the login throttle (kit/http/headers).
        client = scope.get("client")
        address = client_address(scope, settings) if settings else (client or ("",))[0]
        found = b"client:" + address.encode()
    return hashlib.sha256(found or cookie).hexdigest()


async def _send(send: Send, answer: store.Answer) -> None:
    headers = answer.raw_headers()
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body})


def _conflict(request: store.Request, existing: store.Existing) -> store.Answer | None:
    """409 naming what differs from the request that first used the key, or None."""
    differs = [
        name
        for name, mine, theirs in (
            ("method", request.method, existing.method),
            ("path", request.path, existing.path),
            ("body", request.body_hash, existing.body_hash),
        )
        if mine != theirs
    ]
    if not differs:
        return None
    first = f"{existing.method} {existing.path}"
    return store.Answer.detail(
        409,
        f"This idempotency key was already used for another request ({first}): "
        f"the {' and '.join(differs)} differ{'s' if len(differs) == 1 else ''}.",
    )


def layer(app: ASGIApp, settings: Settings) -> ASGIApp:
    """The edge layer (see the module's docstring)."""

    async def idempotency(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in UNSAFE:
            await app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == HEADER:
                await _keyed(app, scope, receive, send, value, settings)
                return
        await app(scope, receive, send)

    return idempotency


async def _keyed(
    app: ASGIApp,
    scope: Scope,
    receive: Receive,
    send: Send,
    raw_key: bytes,
    settings: Settings,
) -> None:
    hours = settings.idempotency_hours
    limit = settings.max_body_bytes
    key = _valid_key(raw_key)
    if key is None:
        detail = f"The X-Idempotency-Key header must be 1 to {MAX_KEY} printable characters."
        await _send(send, store.Answer.detail(400, detail))
        return
    if bears_secret(scope["method"], scope["path"]):
        await _send(send, store.Answer.detail(400, secret.REFUSED))
        return
    body, messages = await read_body(receive, limit)
    if body is None:  # too large or gone: the application answers (and changes nothing)
        await app(scope, replay(messages, receive), send)
        return
    path = scope["path"] + (
        "?" + scope["query_string"].decode("latin-1") if scope["query_string"] else ""
    )
    if len(path) > 1000:
        path = path[:936] + "#" + hashlib.sha256(path.encode()).hexdigest()[:63]
    request = store.Request(
        _credential(scope, settings), key, scope["method"], path, hashlib.sha256(body).hexdigest()
    )
    db = scope["app"].state.db
    scope[store.UNCLAIMED] = request
    capture = Captured()
    try:
        await app(scope, replay(messages, receive), capture.send)
    except BaseException:
        claimed = scope.get(store.CLAIM)
        if claimed is not None:
            await _abandon(db, claimed)
        if capture.status is None:
            await _send(send, store.Answer.detail(500, "Internal server error."))
        raise
    claimed = scope.get(store.CLAIM)
    if capture.status is None:  # nothing was answered: nothing to keep either
        if claimed is not None:
            await _abandon(db, claimed)
        return
    assert capture.status is not None
    answer = store.Answer.of(capture.status, capture.headers, capture.body)
    if store.UNCLAIMED in scope:  # answered before anything needed the key: no change made
        settled = await settle(scope)
        if isinstance(settled, store.Answer):
            await _send(send, settled)
            return
        claimed = settled
    if claimed is None:  # the key was taken: the answer is the refusal
        await _send(send, answer)
        return
    if claimed.session is not None:
        answer = await _commit_with_answer(db, claimed, answer, hours)
    elif claimed.state == "pending":
        try:
            await store.store_alone(db, claimed, answer, hours)
        except Exception:
            log.exception("could not store the answer of idempotency key %r", key)
            await _abandon(db, claimed)
            answer = store.Answer.detail(500, "Internal server error.")
    await _send(send, answer)


async def settle(scope: Scope) -> store.Claim | store.Answer | None:
    """The claim of the request's key, taken now if the idempotency layer left it to the
    path that runs the request (``store.UNCLAIMED``); or the answer that refuses the request
    because its key is taken (a replay, or 409); None for a request without a key. Every
    path calls this before it changes anything, unless its statement claims the key itself."""
    request: store.Request | None = scope.pop(store.UNCLAIMED, None)
    if request is None:
        return scope.get(store.CLAIM)
    db = scope["app"].state.db
    for _attempt in range(3):
        claimed = await store.claim(db, request)
        if claimed is not None:
            break
    if isinstance(claimed, store.Claim):
        scope[store.CLAIM] = claimed
        return claimed
    return _refusal(request, claimed)


async def before_framework(scope: Scope, send: Send) -> bool:
    """Settles the key of a request about to run in the framework; False when the request
    was answered instead (its key is taken)."""
    if store.UNCLAIMED not in scope:
        return True
    settled = await settle(scope)
    if isinstance(settled, store.Answer):
        await _send(send, settled)
        return False
    return True


def _refusal(request: store.Request, existing: store.Existing | None) -> store.Answer:
    if existing is None:
        return store.Answer.detail(409, "This idempotency key is busy. Please try again.")
    conflict = _conflict(request, existing)
    if conflict is not None:
        return conflict
    if existing.status is None:
        detail = "A request with this idempotency key is still being processed."
        return store.Answer.detail(409, detail, [(b"retry-after", b"1")])
    return store.Answer(existing.status, [*existing.headers, list(_REPLAYED)], existing.body)


async def _abandon(db: Any, claim: store.Claim) -> None:
    """Rolls back a parked transaction and frees the key (a retry may run again)."""
    session = claim.session
    claim.session = None
    if session is not None:
        await session.rollback()
        await session.close()
    try:
        await store.release(db, claim)
    except Exception:  # the lease frees the key later
        log.exception("could not release an idempotency key")


async def _commit_with_answer(
    db: Any, claim: store.Claim, answer: store.Answer, hours: float
) -> store.Answer:
    """Writes the answer into the request's transaction and commits the two together;
    the answer to send (an error instead when the commit failed)."""
    session = claim.session
    assert session is not None
    try:
        if answer.storable:
            if not await store.write_answer(session, claim, answer, hours):
                await _abandon(db, claim)
                detail = "The first request with this idempotency key ran too long; retry."
                return store.Answer.detail(409, detail, [(b"retry-after", b"1")])
        else:
            await store.delete_claim(session, claim)
        await commit(session)
    except DBAPIError as exc:
        await _abandon(db, claim)
        busy = busy_error(exc)
        if busy is None:
            log.exception("commit failed for idempotency key %r", claim.request.key)
            return store.Answer.detail(500, "Internal server error.")
        return store.Answer.detail(
            busy.status, str(busy.body()["detail"]), [(b"retry-after", b"1")]
        )
    except Exception:
        log.exception("commit failed for idempotency key %r", claim.request.key)
        await _abandon(db, claim)
        return store.Answer.detail(500, "Internal server error.")
    claim.session = None
    claim.state = "stored" if answer.storable else "released"
    try:
        await run_after_commit(session)
    finally:
        await session.close()
    return answer
