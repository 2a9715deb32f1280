"""Ticket layout shapes. The layout's elements are checked by :mod:`admit.tickets.layout_format`
(they need the event's questions and the background's page size), files by
:mod:`admit.uploads.fields`; here only the JSON types."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from admit.events.plugins import SALES_CHANNELS
from admit.kit.resources.filtering import PK_MAX
from admit.kit.resources.schema import Pk, ReadModel, WriteModel

Ref = Annotated[Pk, Field(ge=1, le=PK_MAX)]
Channel = Literal[SALES_CHANNELS]  # type: ignore[valid-type]
# Every product in every channel, with room to spare: more is a mistake, not a layout.
MAX_ASSIGNMENTS = 5_000


class AssignmentIn(WriteModel):
    item: Ref
    sales_channel: Channel = "web"


class AssignmentOut(ReadModel):
    sales_channel: str
    item: int


class TicketLayoutIn(WriteModel):
    name: Annotated[str, Field(min_length=1, max_length=190)]
    default: bool = False
    layout: list[Any] = Field(default_factory=list)
    # ``file:<uuid>``, the current URL, or null (see admit.uploads.fields).
    background: Annotated[str, Field(max_length=255)] | None = None
    # Written only when sent (the spec calls it read-only; clients of the reference never
    # send it, and a PUT from them must not drop the assignments).
    item_assignments: list[AssignmentIn] = Field(default_factory=list, max_length=MAX_ASSIGNMENTS)


class TicketLayoutOut(ReadModel):
    id: int
    name: str
    default: bool
    layout: list[Any]
    background: str | None
    item_assignments: list[AssignmentOut]


class TicketLayoutItemOut(ReadModel):
    id: int
    layout: int
    item: int
    sales_channel: str
