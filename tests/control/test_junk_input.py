"""Garbage never reaches a 500: every back-office page and form, as a user allowed everything,
with junk ids in its URL (letters, a number past 64 bits), junk in its query string, and
every form field the back office reads posted as junk. Each answer is a page (2xx, 3xx or a
4xx with the refusal), never a server error."""

from __future__ import annotations

import pytest

from tests.control.conftest import sign_in
from tests.control.test_permissions import IDS, ROUTES, _prepare, _url_and_form
from tests.oauth.helpers import csrf

# Every name a back-office form or action reads (fields.py's Field names and first(pairs, …)).
NAMES = """action action_types active admission all_event_permissions all_events
all_organizer_permissions all_products allow_ignore_quota allow_multiple_entries amount answer
block_quota cancellation_fee category clone_from closed code comment conditions contact_mail
count currency date_admission date_from date_to default default_price description email
enabled expires force frontpage_text gate identifier include_pending is_addon is_public item
items limit_event_permissions limit_events limit_organizer_permissions limit_products list
location mark_canceled max_usages name payment payment_manual__enabled payment_term_days
plugins presale_end presale_start price price_includes_tax price_mode question quota rate
refund required search secret security_profile send_email size slug tag target_url tax_rule
testmode text ticket_secret_generator timezone type valid_until value variations _format
date_range paid_only addon_category min_count max_count position multi_allowed price_included
bundled_item bundled_variation designated_price internal_name available_from available_until
condition_all_products condition_limit_products condition_min_count condition_min_value
benefit_discount_matching_percent benefit_only_apply_to_cheapest_n_matches
benefit_same_products benefit_limit_products condition_apply_to_addons
benefit_apply_to_addons mail_subject mail_template mail_additional_recipients
mail_additional_recipients_cc mail_additional_recipients_bcc schedule_rrule schedule_rrule_time
locale export_identifier x-_format x-paid_only x-date_from is_active product attendee_name
attendee_email""".split()
# Letters, past 64 bits, negative, overflowing floats, digits int() refuses or reads as other
# numbers (superscript, Arabic-Indic), past int()'s 4,300 digits, NUL, empty.
JUNK = ("ZZZ", "99999999999999999999", "-1", "1e999", "NaN", "²", "١٢", "9" * 5000, "a\x00b", "")
QUERIES = (
    "?page=99999999999999999999&ordering=zzz&search=%25%27&status=zzz&cursor=zzz",
    "?page=%C2%B2&refresh=%C2%B2&testmode=zzz&tag=%00&search=" + "9" * 5000,
    "?product=%C2%B2-1&provider=%00&placed_from=99999-01-01&placed_until=%C2%B2&list=1e999"
    "&result=%00&search=%00",
    "?product=1-99999999999999999999&provider=x&placed_from=2030-02-30&list=-1&search=-1",
)
BAD_IDS = ("ZZZ", "99999999999999999999")


def _junk_ids(path: str, bad: str) -> str:
    keys = ("id", "cid", "local_id", "id1", "id2", "call", "member", "invite", "token", "code",
            "identifier", "customer", "position")  # fmt: skip
    return path.format(organizer="acme", event="summit", **dict.fromkeys(keys, bad))


def _no_500(response, what: str) -> None:
    assert response.status_code < 500, (what, response.text[:800])
    assert "Traceback" not in response.text, what


@pytest.mark.parametrize(("method", "route"), ROUTES, ids=IDS)
async def test_junk_is_refused_with_a_page_never_a_500(
    web, api, factory, people, shop, method, route
):
    await _prepare(api, factory, route, shop)
    url, _ = _url_and_form(route, shop)
    await sign_in(web, factory, people["boss"])
    token = csrf((await web.get("/logout")).text)
    if method == "GET":
        for query in QUERIES:
            _no_500(await web.get(url + query), url + query[:80])
        for bad in BAD_IDS:
            junk = _junk_ids(route.path, bad)
            _no_500(await web.get(junk), junk)
        return
    for value in JUNK:
        form = {name: value for name in NAMES}
        _no_500(await web.post(url, data={"csrf_token": token, **form}), f"{url} {value!r}")
    multi = {"csrf_token": token, **{name: ["ZZZ", "1"] for name in NAMES}}
    _no_500(await web.post(url, data=multi), f"{url} repeated")
    for bad in BAD_IDS:
        junk = _junk_ids(route.path, bad)
        _no_500(await web.post(junk, data={"csrf_token": token, "name": "x"}), junk)
