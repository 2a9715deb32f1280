"""Which questions a position is asked, given its answers: a question with a
``dependency_question`` is shown (and, when required, must be answered) only when that question
is shown itself and answered with one of ``dependency_values`` (a boolean's ``True`` /
``False``, a choice's option identifiers). A hidden question's answer is not kept.

The checkout enforces this on the server; the shop's script only shows and hides the fields.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from admit.catalog.questions.answers import AnswerIn
from admit.models import Question


def _values(question: Question, answer: AnswerIn | None) -> set[str]:
    """What an answer means for the questions depending on it."""
    if question.type == "B":
        text = (answer.answer or "") if answer is not None else ""
        return {"True" if text in ("True", "true", "1") else "False"}
    if answer is None:
        return set()
    if question.type in ("C", "M"):
        chosen = set(answer.options)
        return {o.identifier for o in question.options if o.id in chosen}
    return {(answer.answer or "").strip()}


def shown(questions: Sequence[Question], answers: Iterable[AnswerIn]) -> set[int]:
    """The ids among ``questions`` (one position's) that are asked, given ``answers``."""
    by_id = {q.id: q for q in questions}
    given: Mapping[int, AnswerIn] = {a.question: a for a in answers}
    memo: dict[int, bool] = {}

    def visible(question: Question) -> bool:
        if question.id in memo:
            return memo[question.id]
        memo[question.id] = False  # a cycle (refused by the API) shows nothing
        parent = (
            by_id.get(question.dependency_question_id)
            if question.dependency_question_id is not None
            else None
        )
        if question.dependency_question_id is None:
            result = True
        elif parent is None:
            result = False  # the question it depends on is not asked for this product
        else:
            wanted = set(question.dependency_values or [])
            result = visible(parent) and bool(_values(parent, given.get(parent.id)) & wanted)
        memo[question.id] = result
        return result

    return {q.id for q in questions if visible(q)}
