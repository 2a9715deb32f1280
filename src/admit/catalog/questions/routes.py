"""Questions ``E/questions/`` and their options ``E/questions/{question}/options/``.

Reading needs event access only; writing needs ``event.items:write``. The rules live in
``service.py``; these resources only wire them into the declared CRUD routes.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from sqlalchemy import Select, false, select
from sqlalchemy.orm import load_only, selectinload
from starlette.responses import Response

from admit.catalog.questions import service
from admit.catalog.questions.rows import OPTION_ROWS, QUESTION_ROWS
from admit.catalog.questions.schemas import OptionIn, OptionOut, QuestionIn, QuestionOut
from admit.kit.http.context import OrgContext
from admit.kit.http.errors import not_found
from admit.kit.http.responses import no_content
from admit.kit.http.routing import api_router
from admit.kit.resources.crud import Resource, mount_crud
from admit.kit.resources.filtering import Filter, FilterSet, Ordering, parse_bool, parse_pk
from admit.kit.stamps.catalog import ModifiedSinceList
from admit.models import Item, Question, QuestionOption

WRITE = "event.items:write"
router = api_router()


class QuestionResource(ModifiedSinceList, Resource[Question]):
    name = "questions"
    path = "/organizers/{organizer}/events/{event}/questions"
    model = Question
    read_schema = QuestionOut
    write_schema = QuestionIn
    write_permission = WRITE
    # Not in the spec, but the reference documents these filters; clients may rely on them.
    filters = FilterSet(
        (
            Filter.boolean("ask_during_checkin", Question.ask_during_checkin),
            Filter.boolean("required", Question.required),
            Filter.eq("identifier", Question.identifier),
        )
    )
    ordering = Ordering(
        fields={"id": Question.id, "position": Question.position},
        default=("position",),
        pk=Question.id,
    )
    loader_options = (
        selectinload(Question.items).options(load_only(Item.id)),
        selectinload(Question.options),
    )
    renderer = QUESTION_ROWS

    def to_read(self, ctx: OrgContext, obj: Question) -> Any:
        return service.question_to_read(obj)

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: Question | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, QuestionIn)
        event_id = ctx.event.id  # type: ignore[attr-defined]
        ctx.extra["resolved"] = await service.validate_question(
            ctx.session, event_id, data, obj, supplied
        )

    async def perform_create(
        self, ctx: OrgContext, data: BaseModel, supplied: set[str]
    ) -> Question:
        assert isinstance(data, QuestionIn)
        question = Question(event_id=ctx.event.id)  # type: ignore[attr-defined]
        service.apply_question(question, data, ctx.extra["resolved"], creating=True)
        ctx.session.add(question)
        await ctx.session.flush()
        return question

    async def perform_update(
        self, ctx: OrgContext, obj: Question, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, QuestionIn)
        service.apply_question(obj, data, ctx.extra["resolved"], creating=False)
        await ctx.session.flush()

    async def perform_delete(self, ctx: OrgContext, obj: Question) -> Response:
        await service.delete_question(ctx.session, obj)
        return no_content()


def _active(query: Select[Any], value: bool) -> Select[Any]:
    # Options have no "active" flag (the reference documents the filter but ignores it): every
    # option is active, so ``active=false`` matches none.
    return query if value else query.where(false())


class OptionResource(Resource[QuestionOption]):
    name = "question-options"
    path = "/organizers/{organizer}/events/{event}/questions/{question}/options"
    model = QuestionOption
    read_schema = OptionOut
    write_schema = OptionIn
    write_permission = WRITE
    parent_param = "question"
    tag = "questions"
    renderer = OPTION_ROWS
    filters = FilterSet((Filter("active", parse_bool, _active),))
    ordering = Ordering(
        fields={"id": QuestionOption.id, "position": QuestionOption.position},
        default=("position",),
        pk=QuestionOption.id,
    )

    async def resolve_parent(self, ctx: OrgContext, value: str) -> Question:
        query = select(Question).where(
            Question.id == parse_pk(value),
            Question.event_id == ctx.event.id,  # type: ignore[attr-defined]
        )
        question = (await ctx.session.execute(query)).scalar_one_or_none()
        if question is None:
            raise not_found()
        return question

    def question(self, ctx: OrgContext) -> Question:
        return ctx.extra["parent"]

    def base_query(self, ctx: OrgContext) -> Select[Any]:
        return select(QuestionOption).where(QuestionOption.question_id == self.question(ctx).id)

    def new_object(self, ctx: OrgContext) -> QuestionOption:
        return QuestionOption(question_id=self.question(ctx).id)

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: QuestionOption | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, OptionIn)
        ctx.extra["taken"] = await service.validate_option(
            ctx.session, self.question(ctx), data.identifier, obj
        )

    def apply(
        self, ctx: OrgContext, obj: QuestionOption, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, OptionIn)
        obj.position = data.position
        obj.answer = data.answer
        obj.identifier = data.identifier

    async def perform_update(
        self, ctx: OrgContext, obj: QuestionOption, data: BaseModel, supplied: set[str]
    ) -> None:
        old = obj.identifier
        self.apply(ctx, obj, data, supplied)
        await service.rename_option(ctx.session, self.question(ctx), old, obj.identifier)
        await ctx.session.flush()

    async def perform_delete(self, ctx: OrgContext, obj: QuestionOption) -> Response:
        await service.forget_option(ctx.session, self.question(ctx), obj.identifier)
        await ctx.session.delete(obj)
        await ctx.session.flush()
        return no_content()


for resource in (QuestionResource(), OptionResource()):
    mount_crud(router, resource)
