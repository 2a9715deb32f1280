"""Tax rules ``E/taxrules/``: declared CRUD, written with ``event.settings.tax:write``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from sqlalchemy import Select
from starlette.responses import Response

from admit.catalog.taxes import service
from admit.catalog.taxes.rows import TAX_RULE_ROWS
from admit.catalog.taxes.schemas import TaxRuleIn, TaxRuleOut
from admit.kit.http.context import OrgContext
from admit.kit.http.responses import no_content
from admit.kit.http.routing import api_router
from admit.kit.resources.crud import Resource, mount_crud
from admit.kit.stamps.catalog import ModifiedSinceList
from admit.models import TaxRule

router = api_router()


class TaxRuleResource(ModifiedSinceList, Resource[TaxRule]):
    name = "taxrules"
    path = "/organizers/{organizer}/events/{event}/taxrules"
    model = TaxRule
    read_schema = TaxRuleOut
    write_schema = TaxRuleIn
    write_permission = "event.settings.tax:write"
    renderer = TAX_RULE_ROWS

    def list_query(self, ctx: OrgContext) -> Select[Any]:
        # The list takes no ordering parameter: always by id, as the reference.
        return super().list_query(ctx).order_by(TaxRule.id)

    def plain_base(self) -> bool:
        return True  # ``list_query`` only orders by id, as the renderer's statements do

    async def validate(
        self, ctx: OrgContext, data: BaseModel, obj: TaxRule | None, supplied: set[str]
    ) -> None:
        assert isinstance(data, TaxRuleIn)
        service.validate_rule(data)

    async def perform_create(self, ctx: OrgContext, data: BaseModel, supplied: set[str]) -> Any:
        assert isinstance(data, TaxRuleIn)
        rule = self.new_object(ctx)
        await service.apply_rule(ctx.session, rule, data)
        return rule

    async def perform_update(
        self, ctx: OrgContext, obj: TaxRule, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, TaxRuleIn)
        await service.apply_rule(ctx.session, obj, data)

    async def perform_delete(self, ctx: OrgContext, obj: TaxRule) -> Response:
        await service.delete_rule(ctx.session, obj)
        return no_content()


mount_crud(router, TaxRuleResource())
