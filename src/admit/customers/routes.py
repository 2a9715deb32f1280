"""``O/customers/`` (+ ``anonymize``), ``O/membershiptypes/`` and ``O/memberships/``.

All three read with ``organizer.customers:read`` and write with ``organizer.customers:write``.
Customers are addressed by their generated ``identifier`` and are anonymized, never deleted.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Path
from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.orm import load_only, selectinload
from starlette.responses import Response

from admit.customers import service
from admit.customers.schemas import (
    CustomerIn,
    CustomerOut,
    MembershipIn,
    MembershipOut,
    MembershipTypeIn,
    MembershipTypeOut,
)
from admit.kit.http.context import OrganizerAccess, OrgContext
from admit.kit.http.errors import not_found
from admit.kit.http.responses import JSONResponse
from admit.kit.http.routing import api_router
from admit.kit.resources.crud import Resource, flush_guard, mount_crud
from admit.kit.resources.filtering import Filter, FilterSet, Ordering, parse_bool, parse_int
from admit.models import Customer, Membership, MembershipType
from admit.notifications.notify import notify

READ = "organizer.customers:read"
WRITE = "organizer.customers:write"

router = api_router()


async def _notify(ctx: OrgContext, action: str, customer: Customer) -> None:
    """Customer types carry the ``identifier`` the API addresses the customer by."""
    await notify(ctx.session, action, organizer_id=ctx.organizer_id, customer=customer.identifier)


class CustomerResource(Resource[Customer]):
    name = "customers"
    path = "/organizers/{organizer}/customers"
    model = Customer
    scope = "organizer"
    read_schema = CustomerOut
    write_schema = CustomerIn
    read_permission = READ
    write_permission = WRITE
    actions = frozenset({"list", "retrieve", "create", "update"})
    filters = FilterSet(
        (
            Filter.where("email", str, lambda v: func.lower(Customer.email) == v.strip().lower()),
            Filter.eq("identifier", Customer.identifier),
            Filter.eq("external_identifier", Customer.external_identifier),
            Filter.boolean("is_active", Customer.is_active),
            Filter.boolean("is_verified", Customer.is_verified),
        )
    )
    ordering = Ordering(
        fields={
            "date_joined": Customer.date_joined,
            "last_modified": Customer.last_modified,
            "identifier": Customer.identifier,
            "email": Customer.email,
        },
        default=("date_joined",),
        pk=Customer.id,
    )

    async def get_object(self, ctx: OrgContext, raw_pk: str) -> Customer:
        # URLs carry the customer's identifier.
        query = (
            self.base_query(ctx)
            .where(Customer.identifier == raw_pk)
            .execution_options(populate_existing=True)
        )
        customer = (await ctx.session.execute(query)).scalars().first()
        if customer is None:
            raise not_found()
        return customer

    async def reload(self, ctx: OrgContext, obj: Customer) -> Customer:
        return await self.get_object(ctx, obj.identifier)

    def to_read(self, ctx: OrgContext, obj: Customer) -> Any:
        return service.customer_to_read(obj)

    async def perform_create(
        self, ctx: OrgContext, data: BaseModel, supplied: set[str]
    ) -> Customer:
        assert isinstance(data, CustomerIn)
        customer = await service.create_customer(ctx.session, ctx.organizer_id, data)
        await _notify(ctx, "service.customer.created", customer)
        return customer

    async def perform_update(
        self, ctx: OrgContext, obj: Customer, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, CustomerIn)
        await service.update_customer(ctx.session, ctx.organizer_id, obj, data)
        await _notify(ctx, "service.customer.changed", obj)


class MembershipTypeResource(Resource[MembershipType]):
    name = "membershiptypes"
    path = "/organizers/{organizer}/membershiptypes"
    model = MembershipType
    scope = "organizer"
    read_schema = MembershipTypeOut
    write_schema = MembershipTypeIn
    read_permission = READ
    write_permission = WRITE
    ordering = Ordering(fields={"id": MembershipType.id}, default=("id",), pk=MembershipType.id)

    async def perform_delete(self, ctx: OrgContext, obj: MembershipType) -> Response:
        await service.delete_membership_type(ctx.session, obj)
        return Response(status_code=204)


class MembershipResource(Resource[Membership]):
    name = "memberships"
    path = "/organizers/{organizer}/memberships"
    model = Membership
    scope = "organizer"
    read_schema = MembershipOut
    write_schema = MembershipIn
    read_permission = READ
    write_permission = WRITE
    actions = frozenset({"list", "retrieve", "create", "update"})
    filters = FilterSet(
        (
            Filter.where(
                "customer",
                str,
                lambda v: Membership.customer_id.in_(
                    select(Customer.id).where(Customer.identifier == v)
                ),
            ),
            Filter.eq("membership_type", Membership.membership_type_id, parse_int),
            Filter("testmode", parse_bool, lambda q, v: q.where(Membership.testmode.is_(v))),
        )
    )
    ordering = Ordering(fields={"id": Membership.id}, default=("id",), pk=Membership.id)
    loader_options = (selectinload(Membership.customer).options(load_only(Customer.identifier)),)

    def to_read(self, ctx: OrgContext, obj: Membership) -> Any:
        return {
            "id": obj.id,
            "customer": obj.customer.identifier,
            "membership_type": obj.membership_type_id,
            "testmode": obj.testmode,
            "date_start": obj.date_start,
            "date_end": obj.date_end,
            "attendee_name_parts": dict(obj.attendee_name_parts or {}),
            "canceled": obj.canceled,
        }

    async def perform_create(
        self, ctx: OrgContext, data: BaseModel, supplied: set[str]
    ) -> Membership:
        assert isinstance(data, MembershipIn)
        customer_id, type_id = await service.membership_references(
            ctx.session, ctx.organizer_id, data, creating=True
        )
        assert customer_id is not None
        membership = Membership(
            organizer_id=ctx.organizer_id,
            customer_id=customer_id,
            testmode=data.testmode,
            membership_type_id=type_id,
        )
        self._apply(membership, data)
        ctx.session.add(membership)
        await ctx.session.flush()
        return membership

    async def perform_update(
        self, ctx: OrgContext, obj: Membership, data: BaseModel, supplied: set[str]
    ) -> None:
        assert isinstance(data, MembershipIn)
        _, type_id = await service.membership_references(
            ctx.session, ctx.organizer_id, data, creating=False
        )
        obj.membership_type_id = type_id
        self._apply(obj, data)
        await ctx.session.flush()

    @staticmethod
    def _apply(membership: Membership, data: MembershipIn) -> None:
        membership.date_start = data.date_start
        membership.date_end = data.date_end
        membership.attendee_name_parts = dict(data.attendee_name_parts)
        membership.canceled = data.canceled


customers = CustomerResource()
for resource in (customers, MembershipTypeResource(), MembershipResource()):
    mount_crud(router, resource)


@router.post(
    "/organizers/{organizer}/customers/{id}/anonymize/",
    tags=["customers"],
    response_model=CustomerOut,
)
async def anonymize_customer(
    ctx: Annotated[OrgContext, Depends(OrganizerAccess(WRITE))],
    id: Annotated[str, Path(description="The customer's identifier")],
) -> Response:
    """Deletes the customer's personal data; the record and its identifier remain."""
    customer = await customers.get_object(ctx, id)
    await flush_guard(service.anonymize(ctx.session, customer))
    await _notify(ctx, "service.customer.anonymized", customer)
    customer = await customers.reload(ctx, customer)
    return JSONResponse(customers.serialize(ctx, customer))
