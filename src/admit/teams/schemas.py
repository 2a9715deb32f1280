from __future__ import annotations

from typing import Annotated

from email_validator import EmailNotValidError, validate_email
from pydantic import AfterValidator, Field, StringConstraints

from admit.auth.permissions import EVENT_PERMISSIONS, ORGANIZER_PERMISSIONS
from admit.kit.resources.schema import ReadModel, WriteModel


def _choices(allowed: tuple[str, ...]):
    def check(values: list[str]) -> list[str]:
        for value in values:
            if value not in allowed:
                raise ValueError(f'"{value}" is not a valid choice.')
        return list(dict.fromkeys(values))

    return AfterValidator(check)


OrganizerPermissions = Annotated[list[str], _choices(ORGANIZER_PERMISSIONS)]
EventPermissions = Annotated[list[str], _choices(EVENT_PERMISSIONS)]

# Surrounding whitespace is dropped and a blank name refused, as DRF's CharField does.
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=190)]

EMAIL_MAX_LENGTH = 190  # the width of the e-mail columns


def _email(value: str) -> str:
    try:
        address = validate_email(value.strip(), check_deliverability=False).normalized
    except EmailNotValidError:
        raise ValueError("Enter a valid email address.") from None
    if len(address) > EMAIL_MAX_LENGTH:
        raise ValueError(f"Ensure this field has no more than {EMAIL_MAX_LENGTH} characters.")
    return address


Email = Annotated[str, AfterValidator(_email)]


class TeamOut(ReadModel):
    id: int
    name: str
    all_events: bool
    limit_events: list[str]
    require_2fa: bool
    all_event_permissions: bool
    limit_event_permissions: list[str]
    all_organizer_permissions: bool
    limit_organizer_permissions: list[str]
    # Deprecated flags, derived from the permission lists.
    can_create_events: bool
    can_change_teams: bool
    can_change_organizer_settings: bool
    can_manage_customers: bool
    can_manage_reusable_media: bool
    can_manage_gift_cards: bool
    can_change_event_settings: bool
    can_change_items: bool
    can_view_orders: bool
    can_change_orders: bool
    can_view_vouchers: bool
    can_change_vouchers: bool
    can_checkin_orders: bool


class TeamIn(WriteModel):
    name: Name
    all_events: bool = False
    limit_events: list[Annotated[str, Field(max_length=50)]] = []  # event slugs
    require_2fa: bool = False
    all_event_permissions: bool = False
    limit_event_permissions: EventPermissions = []
    all_organizer_permissions: bool = False
    limit_organizer_permissions: OrganizerPermissions = []
    # Deprecated flags: applied on top of the lists when sent.
    can_create_events: bool | None = None
    can_change_teams: bool | None = None
    can_change_organizer_settings: bool | None = None
    can_manage_customers: bool | None = None
    can_manage_reusable_media: bool | None = None
    can_manage_gift_cards: bool | None = None
    can_change_event_settings: bool | None = None
    can_change_items: bool | None = None
    can_view_orders: bool | None = None
    can_change_orders: bool | None = None
    can_view_vouchers: bool | None = None
    can_change_vouchers: bool | None = None
    can_checkin_orders: bool | None = None


class MemberOut(ReadModel):
    id: int
    email: str
    fullname: str | None
    require_2fa: bool


class InviteOut(ReadModel):
    id: int
    email: str


class InviteIn(WriteModel):
    email: Email


class TokenOut(ReadModel):
    id: int
    name: str
    active: bool


class TokenCreated(TokenOut):
    token: str


class TokenIn(WriteModel):
    name: Name
