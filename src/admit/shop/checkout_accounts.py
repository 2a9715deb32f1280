"""The customer account in the checkout form: where the organizer has accounts on, the form
offers to log in (or to go on as a guest); a logged-in buyer's order is theirs (their e-mail
address filled in), and each ticket whose product requires a membership gets a choice of
their memberships valid for it (``membership_rules.usable``: the rules the order is checked
against when it is placed, written once).

A ticket that requires a membership is refused here with a sentence when the buyer is not
logged in or chose none; a membership the order's own check refuses (used up meanwhile, for
instance) comes back from ``checkout.checkout`` as that check's sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from admit.customers import membership_rules
from admit.models import Customer, Event, Membership, MembershipType
from admit.shop import account_web as aw
from admit.shop.cart import Cart
from admit.web.forms import first
from admit.web.page import Page

NOT_LOGGED_IN = "Ticket %s (%s) requires a membership: please log in to your account to use it."
NONE_CHOSEN = "Ticket %s (%s) requires a membership: please choose one of yours."
NONE_VALID = "Ticket %s (%s) requires a membership, and none of yours is valid for it."
NO_ACCOUNTS = "Ticket %s (%s) requires a membership, which this shop cannot check online."


@dataclass
class AccountState:
    """What the checkout form shows of the account."""

    on: bool  # the organizer has customer accounts on
    customer: Customer | None
    login_url: str
    signup_url: str
    account_url: str
    # the positions whose product requires a membership, and the memberships each may use
    required: set[int] = field(default_factory=set)
    offers: dict[int, list[tuple[int, str]]] = field(default_factory=dict)


def _label(membership: Membership, mtype: MembershipType, lang: str) -> str:
    names = mtype.name or {}
    name = names.get(lang) or names.get("en") or next(iter(names.values()), "")
    valid = f"{membership.date_start:%Y-%m-%d} – {membership.date_end:%Y-%m-%d}"
    parts = membership.attendee_name_parts or {}
    who = " ".join(v for k, v in parts.items() if k != "_scheme" and v)
    return f"{name} ({valid})" + (f", {who}" if who else "")


async def state(web: Page, event: Event, organizer: str, cart: Cart, lang: str) -> AccountState:
    """The account's part of the checkout form for this cart."""
    url = getattr(event, "account_url", None)
    checkout_url = f"/{organizer}/{event.slug}/checkout/"
    found = AccountState(
        on=url is not None,
        customer=None,
        login_url=aw.login_link(organizer, checkout_url),
        signup_url=f"{aw.account_url(organizer)}signup/",
        account_url=aw.account_url(organizer),
        required={line.position.id for line in cart.lines if line.item.require_membership},
    )
    if not found.on:
        return found
    found.customer = await aw.current(web, event.organizer_id)
    if found.customer is not None and found.required:
        usable = await membership_rules.usable(
            web.session,
            event,
            found.customer.id,
            [(line.position.id, line.item, line.subevent) for line in cart.lines],
        )
        found.offers = {
            pid: [(m.id, _label(m, t, lang)) for m, t in pairs] for pid, pairs in usable.items()
        }
    return found


def chosen(
    account: AccountState, cart: Cart, pairs: list[tuple[str, str]], _: Callable[[str], str]
) -> tuple[dict[int, int], list[str]]:
    """The membership chosen for each position that requires one, and the refusals (as
    sentences in the page's language, ``_``) of those that have none."""
    memberships: dict[int, int] = {}
    problems: list[str] = []
    for index, line in enumerate(cart.lines, start=1):
        pid = line.position.id
        if pid not in account.required:
            continue
        raw = first(pairs, f"membership_{pid}").strip()
        if not account.on:
            problems.append(_(NO_ACCOUNTS) % (index, line.name))
        elif account.customer is None:
            problems.append(_(NOT_LOGGED_IN) % (index, line.name))
        elif raw.isdigit() and len(raw) < 10:
            memberships[pid] = int(raw)
        elif not account.offers.get(pid):
            problems.append(_(NONE_VALID) % (index, line.name))
        else:
            problems.append(_(NONE_CHOSEN) % (index, line.name))
    return memberships, problems
