"""Check-in answers as the API documents them: the scanner's view of a ticket, the redeem
verdict, the list status. The routes render dicts (``checkin/render.py``, ``status.py``); these
closed models are their documented shape, held to it by the OpenAPI conformance test."""

from __future__ import annotations

from typing import Literal

from admit.orders.order_out import Closed, OrderPositionOut


class CheckinPositionOut(OrderPositionOut):
    """The position with the list's check-ins; redeem adds the ``order__*`` fields."""

    require_attention: bool
    order__status: str | None = None
    order__valid_if_pending: bool | None = None
    order__require_approval: bool | None = None
    order__locale: str | None = None


class ListSummary(Closed):
    id: int
    name: str
    event: str
    subevent: int | None
    include_pending: bool


class CheckinQuestionOption(Closed):
    id: int
    identifier: str | None
    position: int
    answer: dict[str, str]


class CheckinQuestion(Closed):
    id: int
    question: dict[str, str]
    type: str
    required: bool
    items: list[int]
    position: int
    identifier: str | None
    ask_during_checkin: bool
    show_during_checkin: bool
    dependency_question: int | None
    dependency_values: list[str]
    options: list[CheckinQuestionOption]


class RedeemOut(Closed):
    """``ok`` (201), ``incomplete`` (400, with the questions to ask), ``error`` (200 with a
    ``reason``; 404 with ``detail`` too when the secret is unknown)."""

    detail: str | None = None
    status: Literal["ok", "incomplete", "error"]
    reason: str | None = None
    reason_explanation: str | None = None
    require_attention: bool
    checkin_texts: list[str]
    position: CheckinPositionOut | None
    list: ListSummary
    questions: list[CheckinQuestion] | None = None


class AnnulOut(Closed):
    status: Literal["ok"]


class StatusVariation(Closed):
    value: str
    id: int
    checkin_count: int
    position_count: int


class StatusItem(Closed):
    name: str
    id: int
    checkin_count: int
    admission: bool
    position_count: int
    variations: list[StatusVariation]


class StatusEvent(Closed):
    name: str


class CheckinListStatusOut(Closed):
    checkin_count: int
    position_count: int
    inside_count: int
    event: StatusEvent
    items: list[StatusItem]
