"""How tax rules render for GETs (see ``kit/resources/render.py``): ``TaxRuleOut`` from its
columns."""

from __future__ import annotations

from admit.catalog.taxes.schemas import TaxRuleOut
from admit.kit.resources.render import Rows
from admit.models import TaxRule

TAX_RULE_ROWS = Rows(TaxRuleOut, TaxRule)
