"""Tax rule input and output shapes, including the structure of ``custom_rules``."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, model_validator

from admit.catalog.taxes.countries import COUNTRIES, RULE_COUNTRIES
from admit.kit.resources.schema import I18n, I18nName, Percent, ReadModel, WriteModel

# The codes of the spec's list; ``E/<reason>`` carries a VATEX exemption reason code.
TAX_CODE_RE = re.compile(r"^(S/(standard|reduced|averaged)|AE|O|E|E/VATEX-[A-Z0-9-]+|Z|G|K|L|M|B)$")


def _check_code(value: str) -> str:
    if not TAX_CODE_RE.match(value):
        raise ValueError(f'"{value}" is not a valid tax code.')
    return value


def _check_country(value: str) -> str:
    if value and value not in COUNTRIES:
        raise ValueError(f'"{value}" is not a valid choice.')
    return value


def _check_rule_country(value: str) -> str:
    if value not in RULE_COUNTRIES:
        raise ValueError(f'"{value}" is not a valid choice.')
    return value


def _null_to_empty(value: Any) -> Any:
    return "" if value is None else value


def _empty_to_null(value: Any) -> Any:
    """The column keeps "" for an unset name (NOT NULL); the reference shows null."""
    return value or None


TaxCode = Annotated[str, AfterValidator(_check_code)]
Rate = Annotated[Percent, Field(ge=0, le=100)]
Country = Annotated[str, BeforeValidator(_null_to_empty), AfterValidator(_check_country)]


class CustomRule(WriteModel):
    """One dynamic rule: matched in order on the buyer's country and address type."""

    model_config = ConfigDict(extra="forbid")

    country: Annotated[str, AfterValidator(_check_rule_country)]
    address_type: Literal["", "individual", "business", "business_vat_id"]
    action: Literal["vat", "reverse", "no", "block", "require_approval"]
    rate: Rate | None = None
    code: TaxCode | None = None
    invoice_text: I18n | None = None

    @model_validator(mode="before")
    @classmethod
    def _drop_form_keys(cls, value: Any) -> Any:
        # ORDER / DELETE are form bookkeeping the reference writes into stored rules and
        # ignores on input; accepting them keeps rules copied from it valid.
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if k not in ("ORDER", "DELETE")}
        return value

    def stored(self) -> dict[str, Any]:
        """The JSON kept on the rule: the keys that were sent, the rate normalised."""
        data = self.model_dump(mode="json", exclude_unset=True)
        if self.rate is not None:
            data["rate"] = f"{self.rate:.2f}"
        return data


class TaxRuleOut(ReadModel):
    id: int
    name: dict[str, str]
    internal_name: Annotated[str | None, BeforeValidator(_empty_to_null)]
    rate: Percent
    code: str | None
    price_includes_tax: bool
    default: bool
    eu_reverse_charge: bool
    home_country: str
    keep_gross_if_rate_changes: bool
    custom_rules: list[dict[str, Any]] | None


class TaxRuleIn(WriteModel):
    name: I18nName
    internal_name: Annotated[str, BeforeValidator(_null_to_empty), Field(max_length=190)] = ""
    rate: Rate
    code: TaxCode | None = None
    price_includes_tax: bool = True
    default: bool = False
    eu_reverse_charge: bool = False
    home_country: Country = ""
    keep_gross_if_rate_changes: bool = False
    custom_rules: list[CustomRule] | None = None

    def values(self) -> dict[str, Any]:
        data = self.model_dump(exclude={"custom_rules"})
        data["custom_rules"] = (
            None if self.custom_rules is None else [rule.stored() for rule in self.custom_rules]
        )
        return data
