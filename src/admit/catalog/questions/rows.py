"""How questions (with their options) render for GETs (see ``kit/resources/render.py``): the same
JSON as ``question_to_read`` through ``QuestionOut``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from admit.catalog.questions.schemas import OptionOut, QuestionOut
from admit.kit.resources.render import Nested, Rows
from admit.models import Question, QuestionOption


def _finish_question(row: dict[str, Any], _parent: Any, _extra: Mapping[str, Any]) -> None:
    values = row["dependency_values"] = list(row["dependency_values"] or [])
    row["dependency_value"] = values[0] if values else None


OPTION_ROWS = Rows(OptionOut, QuestionOption)
QUESTION_ROWS = Rows(
    QuestionOut,
    Question,
    computed=("dependency_value",),
    children=(
        Nested.of(Question.items, probe=True),
        Nested.of(Question.options, OPTION_ROWS, probe=True),
    ),
    finish=_finish_question,
)
