"""Quota schemas: field-level input rules; references and cross-field rules live in service.py."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, field_validator

from admit.kit.resources.filtering import INT_MAX
from admit.kit.resources.schema import ReadModel, WriteModel


def _pk_input(value: Any) -> Any:
    # JSON true/false would otherwise pass as 1/0.
    if isinstance(value, bool):
        raise ValueError("Incorrect type. Expected pk value, received bool.")
    return value


def _int_input(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("A valid integer is required.")
    return value


Pk = Annotated[int, BeforeValidator(_pk_input)]
Size = Annotated[int, BeforeValidator(_int_input), Field(ge=0, le=INT_MAX)]
Position = Annotated[int, BeforeValidator(_int_input), Field(ge=-INT_MAX, le=INT_MAX)]


class QuotaIn(WriteModel):
    name: Annotated[str, Field(min_length=1, max_length=200)]
    # null = unlimited
    size: Size | None = None
    items: list[Pk] = Field(default_factory=list)
    variations: list[Pk] = Field(default_factory=list)
    subevent: Pk | None = None
    close_when_sold_out: bool = False
    closed: bool = False
    release_after_exit: bool = False
    ignore_for_event_availability: bool = False
    position: Position = 0

    @field_validator("name")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("This field may not be blank.")
        return value.strip()

    @field_validator("items", "variations")
    @classmethod
    def _unique(cls, value: list[int]) -> list[int]:
        # A repeated id means the same link; keep the first occurrence.
        return list(dict.fromkeys(value))


class QuotaOut(ReadModel):
    id: int
    name: str
    size: int | None
    items: list[int]
    variations: list[int]
    subevent: int | None
    close_when_sold_out: bool
    closed: bool
    release_after_exit: bool
    ignore_for_event_availability: bool
    position: int
    # Only with ``with_availability=true``; removed from the body otherwise.
    available: bool | None = None
    available_number: int | None = None


class AvailabilityOut(ReadModel):
    available: bool
    available_number: int | None
    total_size: int | None
    pending_orders: int
    paid_orders: int
    exited_orders: int
    cart_positions: int
    blocking_vouchers: int
    waiting_list: int
