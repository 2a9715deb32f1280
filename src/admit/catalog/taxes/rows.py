"""How tax rules render for GETs (see ``kit/resources/render.py``): ``TaxRuleOut`` from its
columns."""

from __future__ import annotations

from sqlalchemy import func

from admit.catalog.taxes.schemas import TaxRuleOut
from admit.kit.resources.render import Rows
from admit.models import TaxRule

# An unset internal name is stored as "" and shown as null, as the reference shows it.
TAX_RULE_ROWS = Rows(
    TaxRuleOut, TaxRule, columns={"internal_name": func.nullif(TaxRule.internal_name, "")}
)
