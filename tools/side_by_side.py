"""Sends the same API calls to the reference and to Admit and prints both answers.

Not part of the test suite: it needs a running reference instance beside a running Admit, each
with an event whose token may write everything. Set ``REF_URL``, ``REF_TOKEN``, ``REF_ORG``,
``REF_EVENT`` and ``ADMIT_URL``, ``ADMIT_TOKEN``, ``ADMIT_ORG``, ``ADMIT_EVENT`` (URLs end in
``/api/v1``), then ``python tools/side_by_side.py``. Each case prints ``SAME`` or ``DIFF``
with both answers; ids that differ by nature (new rows) are compared by what they point at.
The README's "Side by side with the reference" lists the last run's differences.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import httpx

Side = dict[str, str]


def _side(prefix: str) -> Side:
    keys = ("url", "token", "org", "event")
    return {"name": prefix.lower(), **{k: os.environ[f"{prefix}_{k.upper()}"] for k in keys}}


def call(side: Side, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """``O/`` and ``E/`` at the start of ``path`` stand for the organizer and the event."""
    org = f"/organizers/{side['org']}/"
    path = path.replace("E/", f"{org}events/{side['event']}/").replace("O/", org)
    headers = {"Authorization": f"Token {side['token']}"}
    r = httpx.request(method, side["url"] + path, json=body, headers=headers, timeout=30)
    try:
        return r.status_code, r.json()
    except ValueError:
        return r.status_code, r.text[:200]


def compare(name: str, ref: Any, admit: Any) -> bool:
    same = ref == admit
    print(f"{'SAME' if same else 'DIFF'} {name}")
    if not same:
        print(f"     reference: {json.dumps(ref, default=str)[:700]}")
        print(f"     admit:     {json.dumps(admit, default=str)[:700]}")
    return same


def both(sides: dict[str, Side], make: Callable[[Side], Any]) -> dict[str, Any]:
    return {name: make(side) for name, side in sides.items()}


def put_cases(sides: dict[str, Side]) -> None:
    """PUT keeps what it omits and names a missing required field."""
    keys = ["admission", "position", "description", "max_per_order", "default_price", "name"]

    def run(side: Side) -> dict[str, Any]:
        _, cat = call(side, "POST", "E/categories/", {"name": {"en": "Cat"}})
        _, tax = call(side, "POST", "E/taxrules/", {"name": {"en": "VAT"}, "rate": "19.00"})
        body = {"name": {"en": "Ticket"}, "default_price": "10.00", "category": cat["id"],
                "tax_rule": tax["id"], "admission": True, "position": 7,
                "description": {"en": "d"}, "max_per_order": 3}  # fmt: skip
        _, item = call(side, "POST", "E/items/", body)
        put = call(
            side, "PUT", f"E/items/{item['id']}/", {"name": {"en": "R"}, "default_price": "12"}
        )
        _, after = call(side, "GET", f"E/items/{item['id']}/")
        return {
            "put": put[0],
            "kept": {k: after[k] for k in keys},
            "same category and tax rule": [after["category"], after["tax_rule"]]
            == [cat["id"], tax["id"]],
            "missing price": call(side, "PUT", f"E/items/{item['id']}/", {"name": {"en": "R"}}),
            "missing name": call(side, "PUT", f"E/categories/{cat['id']}/", {"position": 1}),
        }

    got = both(sides, run)
    for key in got["ref"]:
        compare(f"PUT items/categories: {key}", got["ref"][key], got["admit"][key])


def webhook_cases(sides: dict[str, Side]) -> None:
    hook = {"target_url": "https://example.org/hook", "enabled": True, "all_events": True,
            "limit_events": [], "action_types": ["pretix.event.order.placed",
                                                 "pretix.event.order.paid"]}  # fmt: skip
    got = both(sides, lambda s: call(s, "POST", "O/webhooks/", hook))
    shown = {k: (v[0], v[1].get("action_types")) for k, v in got.items()}
    compare("webhook: action types as sent", shown["ref"], shown["admit"])
    for name, change in [
        ("webhook: all_events with limit_events", lambda s: {"limit_events": [s["event"]]}),
        ("webhook: unknown action type", lambda s: {"action_types": ["pretix.event.nonsense"]}),
        ("webhook: loopback target", lambda s: {"target_url": "http://127.0.0.1:9/hook"}),
    ]:
        got = both(sides, lambda s, c=change: call(s, "POST", "O/webhooks/", {**hook, **c(s)}))
        compare(name, got["ref"], got["admit"])


def settings_cases(sides: dict[str, Side]) -> None:
    got = both(sides, lambda s: call(s, "GET", "E/settings/")[1])
    common = sorted(set(got["ref"]) & set(got["admit"]))
    print(f"     settings: {len(got['ref'])} keys in the reference, {len(got['admit'])} in Admit,")
    print(f"     {len(common)} in both; Admit only: {sorted(set(got['admit']) - set(got['ref']))}")
    compare(
        "settings: defaults of the common keys",
        {k: got["ref"][k] for k in common},
        {k: got["admit"][k] for k in common},
    )
    for body in [
        {"no_such_setting": 1, "payment_term_days": 9},
        {"payment_term_days": "soon"},
        {"attendee_names_asked": "maybe"},
        {"locales": ["xx"]},
        {"cancel_allow_user_paid_keep_percentage": 12.5},
    ]:
        got = both(sides, lambda s, b=body: call(s, "PATCH", "E/settings/", b))
        keys = list(body)
        shown = {k: (v[0], {x: v[1].get(x) for x in keys}) for k, v in got.items()}
        compare(f"settings: PATCH {body}", shown["ref"], shown["admit"])


TAX_RULE = {
    "rate": "19.00", "price_includes_tax": True, "eu_reverse_charge": True, "home_country": "DE",
    "custom_rules": [
        {"country": "AT", "address_type": "individual", "action": "vat", "rate": "20.00"},
        {"country": "CH", "address_type": "", "action": "block"},
        {"country": "FR", "address_type": "business", "action": "no"},
        {"country": "NL", "address_type": "", "action": "require_approval"},
    ],
}  # fmt: skip
ADDRESSES = {
    "DE private": {"country": "DE", "is_business": False},
    "AT private": {"country": "AT", "is_business": False},
    "AT business, VAT ID validated": {"country": "AT", "is_business": True,
                                      "vat_id": "ATU12345678", "vat_id_validated": True},
    "US business": {"country": "US", "is_business": True},
    "CH private": {"country": "CH", "is_business": False},
    "FR business": {"country": "FR", "is_business": True, "vat_id": "FR12345678901",
                    "vat_id_validated": True},
    "NL private": {"country": "NL", "is_business": False},
}  # fmt: skip


def tax_cases(sides: dict[str, Side], *, custom: bool) -> None:
    rule = TAX_RULE if custom else {**TAX_RULE, "custom_rules": []}
    for keep in (False, True):

        def item(side: Side, keep: bool = keep) -> int:
            body = {"name": {"en": "VAT"}, **rule, "keep_gross_if_rate_changes": keep}
            _, tax = call(side, "POST", "E/taxrules/", body)
            body = {"name": {"en": "T"}, "default_price": "119.00", "tax_rule": tax["id"]}
            _, made = call(side, "POST", "E/items/", body)
            quota = {"name": "Q", "size": None, "items": [made["id"]], "variations": []}
            call(side, "POST", "E/quotas/", quota)
            return made["id"]

        items = both(sides, item)
        for name, address in ADDRESSES.items():

            def order(side: Side, address: dict = address, items: dict = items) -> Any:
                company = "Co" if address.get("is_business") else ""
                invoice = {"name": "A", "company": company, "street": "S 1", "zipcode": "1",
                           "city": "C", **address}  # fmt: skip
                body = {
                    "email": "a@example.org",
                    "payment_provider": "manual",
                    "invoice_address": invoice,
                    "positions": [{"item": items[side["name"]]}],
                }
                status, made = call(side, "POST", "E/orders/", body)
                if status != 201:
                    return status, made
                p = made["positions"][0]
                return (status, made["total"], p["price"], p["tax_rate"], p["tax_value"],
                        made["require_approval"])  # fmt: skip

            got = both(sides, order)
            label = (
                f"tax ({'custom rules' if custom else 'EU reverse charge'}, keep={keep}): {name}"
            )
            compare(label, got["ref"], got["admit"])


if __name__ == "__main__":
    sides = {"ref": _side("REF"), "admit": _side("ADMIT")}  # the keys are the sides' names
    put_cases(sides)
    webhook_cases(sides)
    settings_cases(sides)
    tax_cases(sides, custom=True)
    tax_cases(sides, custom=False)
