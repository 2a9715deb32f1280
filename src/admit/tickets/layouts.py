"""Ticket layouts of an event: the rules behind ``E/ticketlayouts/`` and event cloning.

- **One default per event.** The first layout of an event is its default whatever the request
  says; making a layout the default clears the flag on the others in the same transaction;
  the default layout cannot be un-defaulted directly (make another one the default), so an
  event with layouts always has exactly one. Deleting the default makes the oldest remaining
  layout the default. Layout writes lock the event row (``FOR NO KEY UPDATE``, which orders
  and carts referencing the event do not wait for), so concurrent writes keep the rule.
- **Layouts are validated** against the event's questions and the background's page sizes
  (:mod:`admit.tickets.layout_format`) on creation, and on an update (PUT or PATCH) when the
  layout or the background changes; a name-only update does not fail because a question went
  away.
- **background** takes ``file:<uuid>`` (a PDF upload of the caller), null, or its current URL
  (:mod:`admit.uploads.fields`) and reads back as an absolute URL.
- **item_assignments** (``{item, sales_channel}``) are written only when sent: the given
  pairs become this layout's (a pair assigned to another layout of the event moves here) and
  the layout's other pairs are dropped. Deleting a layout moves its assignments to the event's
  default layout (after the default moved, when the deleted one was it); when no other layout
  is left they are dropped with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from admit.events.cloning import CloneMaps
from admit.jobs.storage import FileStore, StoredFileMissing
from admit.kit.http.context import Principal
from admit.kit.http.errors import FieldErrors
from admit.models import Event, Item, Question, TicketLayout, TicketLayoutItem, UploadedFile
from admit.tickets.layout_format import A4_MM, LayoutContext, LayoutError, check_layout
from admit.tickets.layout_schemas import TicketLayoutIn
from admit.uploads.fields import KEEP, FileChoice, resolve_file_field
from admit.uploads.service import (
    PDF_TYPES,
    InvalidUpload,
    media_path,
    media_url,
    upload_page_sizes,
)
from admit.uploads.sniff import NotThatType

WRITE_PERMISSION = "event.settings.general:write"
DEFAULT_STAYS = "The default layout stays the default until another layout is made the default."


async def lock_event(session: AsyncSession, event_id: int) -> None:
    """Serializes the layout writes of one event (not its orders: NO KEY UPDATE)."""
    await session.execute(
        select(Event.id).where(Event.id == event_id).with_for_update(key_share=True)
    )


# -- reading ----------------------------------------------------------------------------------


async def assignments_of(
    session: AsyncSession, layout_ids: Sequence[int]
) -> dict[int, list[dict[str, Any]]]:
    found: dict[int, list[dict[str, Any]]] = {}
    if layout_ids:
        rows = await session.execute(
            select(
                TicketLayoutItem.layout_id, TicketLayoutItem.item_id, TicketLayoutItem.sales_channel
            )
            .where(TicketLayoutItem.layout_id.in_(layout_ids))
            .order_by(TicketLayoutItem.item_id, TicketLayoutItem.sales_channel)
        )
        for layout_id, item_id, channel in rows:
            found.setdefault(layout_id, []).append({"sales_channel": channel, "item": item_id})
    return found


async def uploads_by_id(
    session: AsyncSession, ids: Iterable[int | None]
) -> dict[int, UploadedFile]:
    wanted = sorted({i for i in ids if i is not None})
    if not wanted:
        return {}
    rows = await session.execute(select(UploadedFile).where(UploadedFile.id.in_(wanted)))
    return {upload.id: upload for upload in rows.scalars()}


def background_url(base_url: str, upload: UploadedFile | None) -> str | None:
    return media_url(base_url, media_path(upload)) if upload is not None else None


def layout_to_read(
    layout: TicketLayout,
    background: UploadedFile | None,
    assignments: list[dict[str, Any]],
    base_url: str,
) -> dict[str, Any]:
    return {
        "id": layout.id,
        "name": layout.name,
        "default": bool(layout.default),
        "layout": list(layout.layout or []),
        "background": background_url(base_url, background),
        "item_assignments": assignments,
    }


async def question_identifiers(session: AsyncSession, event_id: int) -> set[str]:
    rows = await session.scalars(select(Question.identifier).where(Question.event_id == event_id))
    return {identifier for identifier in rows if identifier}


# -- writing ----------------------------------------------------------------------------------


async def _background(
    session: AsyncSession,
    principal: Principal,
    data: TicketLayoutIn,
    current: UploadedFile | None,
    base_url: str,
    errors: dict[str, Any],
) -> FileChoice:
    try:
        return await resolve_file_field(
            session,
            principal,
            data.background,
            current_url=background_url(base_url, current),
            allowed_types=PDF_TYPES,
        )
    except InvalidUpload as exc:
        errors["background"] = [str(exc)]
        return KEEP


async def _layout_errors(
    session: AsyncSession,
    event_id: int,
    layout: list[Any],
    background: UploadedFile | None,
    store: FileStore,
) -> tuple[str, list[str]] | None:
    """None for a valid layout, else the field and its messages."""
    pages: Sequence[tuple[float, float]] = (A4_MM,)
    if background is not None:
        try:
            pages = await upload_page_sizes(store, background)
        except (StoredFileMissing, NotThatType):
            return "background", ["The background file can no longer be read; upload it again."]
    context = LayoutContext(pages=pages, questions=await question_identifiers(session, event_id))
    try:
        check_layout(layout, context)
    except LayoutError as exc:
        return "layout", exc.messages
    return None


async def _assignment_errors(
    session: AsyncSession, event_id: int, data: TicketLayoutIn
) -> list[dict[str, Any]] | None:
    wanted = {entry.item for entry in data.item_assignments}
    if not wanted:
        return None
    found = set(
        await session.scalars(select(Item.id).where(Item.event_id == event_id, Item.id.in_(wanted)))
    )
    problems = [
        {"item": [f'Invalid pk "{entry.item}" - object does not exist.']}
        if entry.item not in found
        else {}
        for entry in data.item_assignments
    ]
    return problems if any(problems) else None


async def save_layout(
    session: AsyncSession,
    event_id: int,
    layout: TicketLayout | None,
    data: TicketLayoutIn,
    supplied: set[str],
    *,
    principal: Principal,
    base_url: str,
    store: FileStore,
) -> TicketLayout:
    """Creates (``layout`` None) or updates a layout; raises FieldErrors, only flushes."""
    await lock_event(session, event_id)
    errors: dict[str, Any] = {}
    creating = layout is None
    current = None
    if layout is not None and layout.background_id is not None:
        current = await session.get(UploadedFile, layout.background_id)
    choice = KEEP
    if creating or "background" in supplied:
        choice = await _background(session, principal, data, current, base_url, errors)
    background = {"keep": current, "clear": None, "set": choice.upload}[choice.action]
    if "background" not in errors and (creating or "layout" in supplied or choice is not KEEP):
        found = await _layout_errors(session, event_id, data.layout, background, store)
        if found is not None:
            errors[found[0]] = found[1]
    if "item_assignments" in supplied:
        problems = await _assignment_errors(session, event_id, data)
        if problems:
            errors["item_assignments"] = problems
    if layout is not None and layout.default and not data.default:
        errors["default"] = [DEFAULT_STAYS]
    if errors:
        raise FieldErrors(errors)

    count = select(func.count(TicketLayout.id)).where(TicketLayout.event_id == event_id)
    if layout is not None:
        count = count.where(TicketLayout.id != layout.id)
    others = await session.scalar(count)
    if layout is None:
        layout = TicketLayout(event_id=event_id, default=False)
        session.add(layout)
    layout.name = data.name
    if creating or "layout" in supplied:
        layout.layout = list(data.layout)
    layout.background_id = background.id if background is not None else None
    make_default = data.default or not others
    await session.flush()
    if make_default and not layout.default:
        await session.execute(
            update(TicketLayout)
            .where(TicketLayout.event_id == event_id, TicketLayout.id != layout.id)
            .values(default=False),
            execution_options={"synchronize_session": False},
        )
        layout.default = True
    if "item_assignments" in supplied:
        await _assign(session, layout.id, data)
    await session.flush()
    return layout


async def _assign(session: AsyncSession, layout_id: int, data: TicketLayoutIn) -> None:
    """The sent pairs become this layout's (taken from other layouts of the event: the items
    were checked to be the event's), and only they."""
    pairs = list(dict.fromkeys((a.item, a.sales_channel) for a in data.item_assignments))
    await session.execute(delete(TicketLayoutItem).where(TicketLayoutItem.layout_id == layout_id))
    by_channel: dict[str, list[int]] = {}
    for item_id, channel in pairs:
        by_channel.setdefault(channel, []).append(item_id)
    for channel, items in by_channel.items():
        await session.execute(
            delete(TicketLayoutItem).where(
                TicketLayoutItem.sales_channel == channel, TicketLayoutItem.item_id.in_(items)
            )
        )
    if pairs:
        await session.execute(
            insert(TicketLayoutItem),
            [{"layout_id": layout_id, "item_id": i, "sales_channel": c} for i, c in pairs],
        )


async def delete_layout(session: AsyncSession, event_id: int, layout: TicketLayout) -> None:
    """Deletes ``layout``; the default and the assignments move as the module says."""
    await lock_event(session, event_id)
    others = list(
        await session.scalars(
            select(TicketLayout)
            .where(TicketLayout.event_id == event_id, TicketLayout.id != layout.id)
            .order_by(TicketLayout.id)
        )
    )
    target = next((other for other in others if other.default), others[0] if others else None)
    if target is not None:
        target.default = True
        await session.flush()
        await session.execute(
            update(TicketLayoutItem)
            .where(TicketLayoutItem.layout_id == layout.id)
            .values(layout_id=target.id),
            execution_options={"synchronize_session": False},
        )
    else:
        await session.execute(
            delete(TicketLayoutItem).where(TicketLayoutItem.layout_id == layout.id)
        )
    await session.delete(layout)
    await session.flush()


# -- cloning ----------------------------------------------------------------------------------


async def copy_layouts(
    session: AsyncSession, source: Event, target: Event, maps: CloneMaps
) -> None:
    """Copies the layouts (sharing their background files) and their item assignments."""
    layouts = list(
        await session.scalars(
            select(TicketLayout).where(TicketLayout.event_id == source.id).order_by(TicketLayout.id)
        )
    )
    copies: dict[int, int] = {}
    for layout in layouts:
        copy = TicketLayout(
            event_id=target.id,
            name=layout.name,
            default=layout.default,
            layout=list(layout.layout or []),
            background_id=layout.background_id,
        )
        session.add(copy)
        await session.flush()
        copies[layout.id] = copy.id
    if not copies:
        return
    rows = await session.execute(
        select(TicketLayoutItem.layout_id, TicketLayoutItem.item_id, TicketLayoutItem.sales_channel)
        .where(TicketLayoutItem.layout_id.in_(list(copies)))
        .order_by(TicketLayoutItem.id)
    )
    values = [
        {"layout_id": copies[layout_id], "item_id": maps.items.get_required(item_id),
         "sales_channel": channel}
        for layout_id, item_id, channel in rows
    ]  # fmt: skip
    if values:
        await session.execute(insert(TicketLayoutItem), values)
