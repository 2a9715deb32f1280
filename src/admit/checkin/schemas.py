"""Check-in schemas: field-level input rules. References (items, subevent, gates, lists) and
rules are checked against the database in the services."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator

from admit.kit.resources.filtering import PK_MAX
from admit.kit.resources.schema import DateTime, LongText, ReadModel, WriteModel
from admit.kit.resources.schema import Pk as AnyPk

# An id that can exist: out-of-range values must not reach an INTEGER column.
Pk = Annotated[AnyPk, Field(ge=1, le=PK_MAX)]


def _unique(value: list[int]) -> list[int]:
    return list(dict.fromkeys(value))


class CheckinListIn(WriteModel):
    name: Annotated[str, Field(min_length=1, max_length=190)]
    all_products: bool = True
    limit_products: list[Pk] = Field(default_factory=list)
    subevent: Pk | None = None
    include_pending: bool = False
    allow_multiple_entries: bool = False
    allow_entry_after_exit: bool = True
    exit_all_at: DateTime | None = None
    addon_match: bool = False
    ignore_in_statistics: bool = False
    consider_tickets_used: bool = True
    rules: dict[str, Any] = Field(default_factory=dict)
    gates: list[Pk] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("This field may not be blank.")
        return value.strip()

    @field_validator("limit_products", "gates")
    @classmethod
    def _unique_ids(cls, value: list[int]) -> list[int]:
        return _unique(value)


class CheckinListOut(ReadModel):
    id: int
    name: str
    all_products: bool
    limit_products: list[int]
    subevent: int | None
    position_count: int | None = None
    checkin_count: int | None = None
    include_pending: bool
    allow_multiple_entries: bool
    allow_entry_after_exit: bool
    exit_all_at: Any
    addon_match: bool
    ignore_in_statistics: bool
    consider_tickets_used: bool
    rules: dict[str, Any]
    gates: list[int]


def _text(value: Any) -> Any:
    """Scanners send answers as text; numbers and booleans are taken as their text."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return value


class RedeemIn(WriteModel):
    secret: Annotated[str, Field(min_length=1, max_length=10000)]
    source_type: Annotated[str, Field(max_length=32)] = "barcode"
    lists: Annotated[list[Pk], Field(min_length=1, max_length=100)]
    type: Literal["entry", "exit"] = "entry"
    datetime: DateTime | None = None
    force: bool = False
    questions_supported: bool = True
    ignore_unpaid: bool = False
    answers: dict[str, Annotated[LongText | None, BeforeValidator(_text)]] = Field(
        default_factory=dict
    )
    nonce: Annotated[str, Field(max_length=190)] | None = None
    use_order_locale: bool = False

    @field_validator("lists")
    @classmethod
    def _unique_lists(cls, value: list[int]) -> list[int]:
        return _unique(value)


class AnnulIn(WriteModel):
    nonce: Annotated[str, Field(min_length=1, max_length=190)]
    lists: Annotated[list[Pk], Field(min_length=1, max_length=100)]
    datetime: DateTime | None = None
    error_explanation: Annotated[str, Field(max_length=10000)] | None = None

    @field_validator("lists")
    @classmethod
    def _unique_lists(cls, value: list[int]) -> list[int]:
        return _unique(value)


class CheckinOut(ReadModel):
    id: int
    successful: bool
    error_reason: str | None
    error_explanation: str | None
    position: int | None
    datetime: Any
    created: Any
    list: int
    auto_checked_in: bool
    gate: int | None
    device: int | None
    device_id: int | None
    type: str


# Module-level names: the rule's ``list`` field shadows the builtin inside the class body.
Names = list[Annotated[str, Field(min_length=1, max_length=64)]]
Ids = list[Pk]


class AutoCheckinRuleIn(WriteModel):
    list: Pk | None = None
    mode: Literal["placed", "paid"] = "placed"
    all_sales_channels: bool = True
    limit_sales_channels: Names = Field(default_factory=Names)
    all_products: bool = True
    limit_products: Ids = Field(default_factory=Ids)
    limit_variations: Ids = Field(default_factory=Ids)
    all_payment_methods: bool = True
    limit_payment_methods: Names = Field(default_factory=Names)

    @field_validator("limit_products", "limit_variations")
    @classmethod
    def _unique_ids(cls, value: Ids) -> Ids:
        return _unique(value)

    @field_validator("limit_sales_channels", "limit_payment_methods")
    @classmethod
    def _unique_names(cls, value: Names) -> Names:
        return Names(dict.fromkeys(value))


class AutoCheckinRuleOut(ReadModel):
    id: int
    list: int | None
    mode: str
    all_sales_channels: bool
    limit_sales_channels: Names
    all_products: bool
    limit_products: Ids
    limit_variations: Ids
    all_payment_methods: bool
    limit_payment_methods: Names
