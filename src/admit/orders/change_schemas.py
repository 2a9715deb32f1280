"""Input of ``POST E/orders/{code}/change/``, in the reference's shape.

Each list names what it acts on by id (``position``: an order position's ``id``, ``fee``: an
order fee's ``id``); ``patch_*`` entries carry the new values in ``body``. New positions take
the fields a position has when an order is created, with ``addon_to`` naming the ``id`` of a
position of this order (the order exists already, so there is no ``positionid`` to refer to).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from admit.catalog.questions.answers import AnswerIn
from admit.kit.resources.filtering import PK_MAX
from admit.kit.resources.schema import DateTime, Money, Pk, WriteModel
from admit.orders.schemas import NameFields


def _in_range(value: int) -> int:
    """An id no row can have is answered like a missing one (and never reaches the database,
    whose integer columns could not even compare it)."""
    if not 1 <= value <= PK_MAX:
        raise ValueError(f'Invalid pk "{value}" - object does not exist.')
    return value


PK = Annotated[Pk, AfterValidator(_in_range)]


class PositionRef(WriteModel):
    position: PK


class FeeRef(WriteModel):
    fee: PK


class PositionChange(NameFields):
    """What ``patch_positions`` may change; only the supplied fields are applied."""

    item: PK | None = None
    variation: PK | None = None
    subevent: PK | None = None
    seat: Annotated[str, Field(max_length=190)] | None = None
    price: Money | None = None
    tax_rule: PK | None = None
    secret: str | None = Field(default=None, min_length=1, max_length=255)
    valid_from: DateTime | None = None
    valid_until: DateTime | None = None
    answers: list[AnswerIn] | None = None

    @model_validator(mode="after")
    def _one_name(self) -> PositionChange:
        if self.attendee_name and self.attendee_name_parts:
            raise ValueError("Do not specify attendee_name if you specified attendee_name_parts.")
        return self


class PositionPatchIn(WriteModel):
    position: PK
    body: PositionChange


class NewPosition(NameFields):
    """A position added to the order (``create_positions``)."""

    item: PK
    variation: PK | None = None
    price: Money | None = None
    secret: str | None = Field(default=None, min_length=1, max_length=255)
    addon_to: PK | None = None
    subevent: PK | None = None
    seat: Annotated[str, Field(max_length=190)] | None = None
    answers: list[AnswerIn] = Field(default_factory=list)
    valid_from: DateTime | None = None
    valid_until: DateTime | None = None

    @model_validator(mode="after")
    def _one_name(self) -> NewPosition:
        if self.attendee_name and self.attendee_name_parts:
            raise ValueError("Do not specify attendee_name if you specified attendee_name_parts.")
        return self


class FeeChange(WriteModel):
    value: Money


class FeePatchIn(WriteModel):
    fee: PK
    body: FeeChange


class ChangeIn(WriteModel):
    patch_positions: list[PositionPatchIn] = Field(default_factory=list)
    cancel_positions: list[PositionRef] = Field(default_factory=list)
    create_positions: list[NewPosition] = Field(default_factory=list)
    split_positions: list[PositionRef] = Field(default_factory=list)
    patch_fees: list[FeePatchIn] = Field(default_factory=list)
    cancel_fees: list[FeeRef] = Field(default_factory=list)
    recalculate_taxes: Literal["keep_net", "keep_gross"] | None = None
    # The reference's blocks: a blocked ticket is refused at every scanner (block list).
    add_block: list[PositionRef] = Field(default_factory=list)
    remove_block: list[PositionRef] = Field(default_factory=list)
    send_email: bool = False
    reissue_invoice: bool = True  # the order's invoice is canceled and issued anew
