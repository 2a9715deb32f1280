"""For every PUT route: the fields a PUT must carry, and a PATCH body that gives the object
non-default values in as many optional fields as the route takes.

Keyed by the route template below ``/api/v1/organizers/{organizer}``, like the ETag recipes
(``tests/conditional/recipes.py``), whose ``make`` creates the object. ``test_put_generated``
fails for a PUT route without an entry here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from tests.conditional.recipes import E, Env, O

Rich = Callable[[Env, str], Awaitable[dict[str, Any]]]


def fixed(body: dict[str, Any]) -> Rich:
    async def rich(env: Env, url: str) -> dict[str, Any]:
        return body

    return rich


@dataclass
class PutRecipe:
    # The fields the reference requires on a PUT (400 "This field is required." without them).
    required: tuple[str, ...]
    rich: Rich
    # Makes the object and returns its URL, when the ETag recipe of the path does not.
    make: Callable[[Env], Awaitable[str]] | None = None


async def _settings(env: Env) -> str:
    return f"{E}/waitinglist_settings/"


async def _item(env: Env) -> int:
    return await env.item()


async def _category(env: Env, **extra: Any) -> int:
    return (await env.post(f"{E}/categories/", {"name": {"en": "Extras"}, **extra}))["id"]


async def _rule(env: Env) -> int:
    return (await env.post(f"{E}/taxrules/", {"name": {"en": "VAT"}, "rate": "7.00"}))["id"]


async def _checkinlist(env: Env, url: str) -> dict[str, Any]:
    return {
        "all_products": False,
        "limit_products": [await _item(env)],
        "include_pending": True,
        "allow_multiple_entries": True,
        "allow_entry_after_exit": False,
        "exit_all_at": "2030-01-02T03:00:00Z",
        "addon_match": True,
        "ignore_in_statistics": True,
        "consider_tickets_used": False,
        "rules": {"==": [1, 1]},
    }


async def _autocheckin(env: Env, url: str) -> dict[str, Any]:
    return {
        "mode": "paid",
        "all_sales_channels": False,
        "limit_sales_channels": ["web"],
        "all_products": False,
        "limit_products": [await _item(env)],
        "all_payment_methods": False,
        "limit_payment_methods": ["manual"],
    }


async def _item_rich(env: Env, url: str) -> dict[str, Any]:
    return {
        "internal_name": "tkt",
        "category": await _category(env),
        "tax_rule": await _rule(env),
        "active": False,
        "description": {"en": "Entry"},
        "free_price": True,
        "free_price_suggestion": "30.00",
        "original_price": "40.00",
        "admission": True,
        "personalized": False,
        "position": 7,
        "available_from": "2030-01-01T10:00:00Z",
        "available_until": "2030-02-01T10:00:00Z",
        "require_voucher": True,
        "hide_without_voucher": True,
        "allow_cancel": False,
        "min_per_order": 2,
        "max_per_order": 5,
        "checkin_attention": True,
        "checkin_text": "Check ID",
        "require_approval": True,
        "require_bundling": True,
        "generate_tickets": False,
        "allow_waitinglist": False,
        "show_quota_left": True,
        "all_sales_channels": False,
        "limit_sales_channels": ["web"],
        "available_from_mode": "info",
        "available_until_mode": "info",
        "hidden_if_item_available": await _item(env),
        "hidden_if_item_available_mode": "info",
        "grant_membership_duration_like_event": False,
        "grant_membership_duration_days": 3,
        "grant_membership_duration_months": 1,
        "validity_mode": "fixed",
        "validity_fixed_from": "2030-01-01T00:00:00Z",
        "validity_fixed_until": "2030-12-31T00:00:00Z",
        "validity_dynamic_start_choice": True,
        "validity_dynamic_start_choice_day_limit": 4,
        "program_times": [{"start": "2030-01-01T10:00:00Z", "end": "2030-01-01T12:00:00Z"}],
    }


async def _questions(env: Env, url: str) -> dict[str, Any]:
    return {
        "help_text": {"en": "As on your ID"},
        "required": True,
        "items": [await _item(env)],
        "position": 4,
        "identifier": "FULLNAME",
        "ask_during_checkin": True,
        "show_during_checkin": True,
        "hidden": True,
        "print_on_invoice": True,
        "valid_string_length_min": 2,
        "valid_string_length_max": 80,
    }


async def _device(env: Env, url: str) -> dict[str, Any]:
    gate = await env.post(f"{O}/gates/", {"name": "North"})
    return {
        "all_events": False,
        "limit_events": ["summit"],
        "security_profile": "pretixscan",
        "gate": gate["id"],
    }


async def _quota(env: Env, url: str) -> dict[str, Any]:
    return {
        "size": 9,
        "items": [await _item(env)],
        "close_when_sold_out": True,
        "closed": True,
        "release_after_exit": True,
        "ignore_for_event_availability": True,
        "position": 3,
    }


async def _voucher(env: Env, url: str) -> dict[str, Any]:
    return {
        "max_usages": 3,
        "min_usages": 2,
        "valid_until": "2030-06-01T00:00:00Z",
        "allow_ignore_quota": True,
        "price_mode": "set",
        "value": "5.00",
        "item": await _item(env),
        "tag": "press",
        "comment": "VIP",
        "show_hidden_items": False,
        "all_addons_included": True,
        "all_bundles_included": True,
        "budget": "50.00",
    }


async def _discount(env: Env, url: str) -> dict[str, Any]:
    return {
        "active": False,
        "internal_name": "Early",
        "position": 2,
        "all_sales_channels": False,
        "limit_sales_channels": ["web"],
        "available_from": "2030-01-01T00:00:00Z",
        "available_until": "2030-02-01T00:00:00Z",
        "condition_all_products": False,
        "condition_limit_products": [await _item(env)],
        "condition_apply_to_addons": False,
        "condition_ignore_voucher_discounted": True,
        "condition_min_count": 3,
        "benefit_discount_matching_percent": "10.00",
        "benefit_only_apply_to_cheapest_n_matches": 1,
        "benefit_apply_to_addons": False,
        "benefit_ignore_voucher_discounted": True,
    }


async def _waiting(env: Env, url: str) -> dict[str, Any]:
    return {"name_parts": {"full_name": "Ann Example"}, "phone": "+4930123456", "locale": "de"}


async def _team(env: Env, url: str) -> dict[str, Any]:
    return {
        "all_events": False,
        "limit_events": ["summit"],
        "require_2fa": True,
        "limit_event_permissions": ["event.orders:read"],
        "limit_organizer_permissions": ["organizer.giftcards:read"],
    }


async def _subevent(env: Env, url: str) -> dict[str, Any]:
    return {
        "active": True,
        "is_public": False,
        "date_to": "2030-02-01T23:00:00Z",
        "date_admission": "2030-02-01T18:00:00Z",
        "presale_start": "2030-01-01T00:00:00Z",
        "presale_end": "2030-02-01T12:00:00Z",
        "frontpage_text": {"en": "Welcome"},
        "location": {"en": "Hall"},
        "geo_lat": 52.5,
        "geo_lon": 13.4,
    }


SCHEDULED = {
    "locale": "de",
    "mail_additional_recipients": "a@example.org",
    "mail_additional_recipients_cc": "b@example.org",
    "mail_additional_recipients_bcc": "c@example.org",
    "mail_subject": "Daily",
}
SCHEDULED_REQUIRED = (
    "export_identifier",
    "mail_subject",
    "mail_template",
    "schedule_rrule",
    "schedule_rrule_time",
)


PUT_RECIPES: dict[str, PutRecipe] = {
    "/events/{event}/checkinlists/{id}/": PutRecipe(("name",), _checkinlist),
    "/events/{event}/auto_checkin_rules/{id}/": PutRecipe((), _autocheckin),
    "/teams/{id}/": PutRecipe(("name",), _team),
    "/events/{event}/": PutRecipe(
        ("name", "slug", "date_from"),
        fixed(
            {
                "date_to": "2030-01-02T02:00:00Z",
                "date_admission": "2030-01-01T18:00:00Z",
                "presale_start": "2029-06-01T00:00:00Z",
                "presale_end": "2030-01-01T12:00:00Z",
                "location": {"en": "Main hall"},
                "geo_lat": 52.5,
                "geo_lon": 13.4,
                "is_public": False,
                "testmode": True,
                "timezone": "Europe/Berlin",
                "all_sales_channels": False,
                "limit_sales_channels": ["web"],
            }
        ),
    ),
    "/events/{event}/subevents/{id}/": PutRecipe(("name", "date_from"), _subevent),
    "/meta_properties/{id}/": PutRecipe(
        ("name",),
        fixed({"default": "blue", "required": True, "allowed_values": ["blue", "red"]}),
    ),
    "/events/{event}/taxrules/{id}/": PutRecipe(
        ("name", "rate"),
        fixed(
            {
                "internal_name": "vat",
                "price_includes_tax": False,
                "keep_gross_if_rate_changes": True,
            }
        ),
    ),
    "/events/{event}/categories/{id}/": PutRecipe(
        ("name",),
        fixed(
            {
                "internal_name": "extras",
                "description": {"en": "More"},
                "position": 3,
                "is_addon": True,
            }
        ),
    ),
    "/events/{event}/items/{id}/": PutRecipe(("name", "default_price"), _item_rich),
    "/events/{event}/items/{item}/variations/{id}/": PutRecipe(
        ("value",),
        fixed(
            {
                "default_price": "7.00",
                "active": False,
                "description": {"en": "Big"},
                "position": 3,
                "original_price": "9.00",
                "free_price_suggestion": "8.00",
                "require_approval": True,
                "checkin_attention": True,
                "checkin_text": "Look",
                "available_from": "2030-01-01T00:00:00Z",
                "available_until": "2030-02-01T00:00:00Z",
                "hide_without_voucher": True,
                "all_sales_channels": False,
                "limit_sales_channels": ["web"],
            }
        ),
    ),
    "/events/{event}/items/{item}/addons/{id}/": PutRecipe(
        ("addon_category",),
        fixed(
            {
                "min_count": 1,
                "max_count": 3,
                "position": 2,
                "multi_allowed": True,
                "price_included": True,
            }
        ),
    ),
    "/events/{event}/items/{item}/bundles/{id}/": PutRecipe(
        ("bundled_item",), fixed({"count": 3, "designated_price": "2.50"})
    ),
    # Both fields are required: there is nothing optional to keep.
    "/events/{event}/items/{item}/program_times/{id}/": PutRecipe(("start", "end"), fixed({})),
    "/events/{event}/questions/{id}/": PutRecipe(("question", "type", "identifier"), _questions),
    "/events/{event}/questions/{question}/options/{id}/": PutRecipe(
        ("identifier", "answer"), fixed({"identifier": "LARGE", "position": 5})
    ),
    "/events/{event}/discounts/{id}/": PutRecipe((), _discount),
    "/events/{event}/quotas/{id}/": PutRecipe(("name",), _quota),
    "/seatingplans/{id}/": PutRecipe(("name", "layout"), fixed({"name": "Arena"})),
    # Only ``blocked`` is writable on a seat, and it is not required.
    "/events/{event}/seats/{id}/": PutRecipe((), fixed({"blocked": True})),
    "/events/{event}/subevents/{subevent_id}/seats/{id}/": PutRecipe((), fixed({"blocked": True})),
    "/devices/{id}/": PutRecipe(("name",), _device),
    "/gates/{id}/": PutRecipe(("name",), fixed({"identifier": "n1"})),
    "/customers/{id}/": PutRecipe(
        (),
        fixed(
            {
                "external_identifier": "ext-1",
                "email": "c@example.org",
                "phone": "+4930123456",
                "name_parts": {"full_name": "Cee Example"},
                "is_active": False,
                "is_verified": False,
                "locale": "de",
                "notes": "Regular",
            }
        ),
    ),
    "/membershiptypes/{id}/": PutRecipe(
        ("name",), fixed({"transferable": True, "allow_parallel_usage": True, "max_usages": 3})
    ),
    "/memberships/{id}/": PutRecipe(
        ("membership_type", "date_start", "date_end"),
        fixed({"attendee_name_parts": {"full_name": "Mo"}, "canceled": True}),
    ),
    "/webhooks/{id}/": PutRecipe(
        ("target_url", "action_types"),
        fixed({"enabled": False, "all_events": False, "limit_events": ["summit"], "comment": "x"}),
    ),
    "/giftcards/{id}/": PutRecipe(
        ("value",),
        fixed({"value": "12.00", "expires": "2031-01-01T00:00:00Z", "conditions": "Staff"}),
    ),
    "/giftcardacceptances/{id}/": PutRecipe(("active",), fixed({"active": False})),
    "/events/{event}/vouchers/{id}/": PutRecipe((), _voucher),
    "/events/{event}/waitinglistentries/{id}/": PutRecipe(("email", "item"), _waiting),
    "/events/{event}/waitinglist_settings/": PutRecipe(
        (), fixed({"auto_assign": True, "voucher_hours": 12}), make=_settings
    ),
    "/events/{event}/sendmail_rules/{id}/": PutRecipe(
        ("subject", "template"),
        fixed(
            {
                "enabled": False,
                "include_pending": True,
                "send_to": "both",
                "offset_to_event_end": True,
            }
        ),
    ),
    "/events/{event}/scheduled_exports/{id}/": PutRecipe(SCHEDULED_REQUIRED, fixed(SCHEDULED)),
    "/scheduled_exports/{id}/": PutRecipe(
        SCHEDULED_REQUIRED, fixed({**SCHEDULED, "timezone": "Europe/Berlin"})
    ),
    "/events/{event}/ticketlayouts/{id}/": PutRecipe(("name",), fixed({"name": "Fancy"})),
}
