"""Seating plan and seat schemas (the layout itself is checked in ``layout.py``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator

from admit.kit.resources.schema import Pk, ReadModel, WriteModel

BULK_LIMIT = 10_000


class SeatingPlanIn(WriteModel):
    name: Annotated[str, Field(min_length=1, max_length=190)]
    layout: dict[str, Any]

    @field_validator("name")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("This field may not be blank.")
        return value.strip()


class SeatingPlanOut(ReadModel):
    id: int
    name: str
    layout: dict[str, Any]


class SeatOut(ReadModel):
    """``orderposition``/``cartposition``/``voucher``: ids, or objects with ``expand``."""

    id: int
    subevent: int | None
    zone_name: str
    row_name: str
    row_label: str | None
    seat_number: str
    seat_label: str | None
    seat_guid: str
    product: int | None
    blocked: bool
    orderposition: int | dict[str, Any] | None
    cartposition: int | dict[str, Any] | None
    voucher: int | dict[str, Any] | None


class SeatPatch(WriteModel):
    """Only ``blocked`` can change; every other field is read-only and ignored."""

    blocked: bool | None = None

    @field_validator("blocked", mode="before")
    @classmethod
    def _strict(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("This field may not be null.")
        return value


class BulkSeatsIn(WriteModel):
    """``{"ids": [...]}`` or ``{"seat_guids": [...]}``, at most 10,000 seats."""

    ids: Annotated[list[Pk], Field(max_length=BULK_LIMIT)] | None = None
    seat_guids: (
        Annotated[list[Annotated[str, Field(max_length=190)]], Field(max_length=BULK_LIMIT)] | None
    ) = None

    @model_validator(mode="after")
    def _one_of(self) -> BulkSeatsIn:
        if (self.ids is None) == (self.seat_guids is None):
            raise ValueError('Pass either "ids" or "seat_guids".')
        return self
