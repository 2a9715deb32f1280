"""Every operation of the OpenAPI document gets a summary and a description in plain words.

Hand-written routes describe themselves (their handler's docstring, or the ``summary`` /
``description`` they pass); the operations ``kit/resources/crud.py`` mounts are described from their
resource: what it is (:data:`RESOURCES`, one line per resource), what the action does and its
rules (:data:`ACTIONS`). Every description then says which credentials and permission the
operation needs, read from the route's access check, so the text cannot drift from the check.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from fastapi.routing import APIRoute

# resource name (kit/resources/crud) -> (singular, plural, what it is)
RESOURCES: dict[str, tuple[str, str, str]] = {
    "cartpositions": ("cart position", "cart positions",
                      "A cart position reserves quota for a product until the cart expires; "
                      "it becomes an order position when an order is created from it."),
    "discounts": ("discount", "discounts",
                  "An automatic discount: a price reduction applied when a cart meets its "
                  "conditions (products, count, sales channel, time window)."),
    "categories": ("product category", "product categories",
                   "Product categories group products in the shop; a category can be an add-on "
                   "category, offered only with another product."),
    "items": ("product", "products",
              "A product (item) is what is sold: an admission ticket, merchandise, an add-on. "
              "Prices are strings (\"23.00\"); names are multi-lingual objects."),
    "item-variations": ("product variation", "product variations",
                        "A variation of a product (a size, a category of seat) with its own "
                        "price and availability."),
    "item-program-times": ("program time", "program times",
                           "A time slot of a product, shown besides the event's own times "
                           "(the product's `program_times` field lists the same slots)."),
    "item-addons": ("add-on configuration", "add-on configurations",
                    "Which add-on category a product offers, with minimum and maximum counts."),
    "item-bundles": ("bundle configuration", "bundle configurations",
                     "A product included with another product, at a designated price."),
    "questions": ("question", "questions",
                  "A question asked of buyers or attendees for some products (text, number, "
                  "choice, date, file, ...), optionally also at check-in."),
    "question-options": ("answer option", "answer options",
                         "A choice offered by a choice or multiple-choice question."),
    "taxrules": ("tax rule", "tax rules",
                 "A tax rule: the rate products are taxed at, and whether prices include it."),
    "checkinlists": ("check-in list", "check-in lists",
                     "A check-in list says which tickets are valid at an entrance (products, "
                     "date, rules) and records their check-ins."),
    "checkins": ("check-in", "check-ins",
                 "A recorded scan: entry or exit of a ticket on a check-in list, successful or "
                 "refused with a reason."),
    "auto_checkin_rules": ("automatic check-in rule", "automatic check-in rules",
                           "A rule that checks tickets in automatically when they are bought or "
                           "paid through a given sales channel or payment method."),
    "customers": ("customer account", "customer accounts",
                  "A customer account of the organizer's shop: login identity, name, e-mail and "
                  "the memberships it holds."),
    "membershiptypes": ("membership type", "membership types",
                        "A kind of membership (a season pass, a club membership) that products "
                        "can grant or require."),
    "memberships": ("membership", "memberships",
                    "A membership a customer account holds, valid for a period and a number of "
                    "uses."),
    "devices": ("device", "devices",
                "A device (a scanner or box office) registered with the organizer; it "
                "authenticates with its own token and is limited to its events."),
    "gates": ("gate", "gates", "A gate groups devices at one entrance."),
    "giftcards": ("gift card", "gift cards",
                  "A gift card: a secret code with a balance that can pay for orders."),
    "giftcardacceptances": ("gift card acceptance", "gift card acceptances",
                            "Another organizer whose gift cards this organizer accepts."),
    "quotas": ("quota", "quotas",
               "A quota limits how many of some products (and variations) can be sold; "
               "availability is computed from its size and what is sold or reserved."),
    "event_scheduled_exports": ("scheduled export of the event", "scheduled exports of the event",
                                "An export run on a schedule and mailed to its recipients."),
    "organizer_scheduled_exports": ("scheduled export of the organizer",
                                    "scheduled exports of the organizer",
                                    "A cross-event export run on a schedule and mailed to its "
                                    "recipients."),
    "seatingplans": ("seating plan", "seating plans",
                     "A seating plan: the layout of seats in a venue, used by events and their "
                     "dates."),
    "sendmail_rules": ("automated e-mail rule", "automated e-mail rules",
                       "A rule that sends an e-mail to buyers or attendees at a time relative "
                       "to the event or the order."),
    "subevents": ("event date", "event dates",
                  "A date of an event series (a sub-event) with its own times, prices and "
                  "quotas."),
    "organizer-subevents": ("event date", "event dates of every series",
                            "The dates of every event series of the organizer the caller can "
                            "see."),
    "meta-properties": ("event metadata property", "event metadata properties",
                        "A metadata field every event of the organizer can carry (a value per "
                        "event, with a default)."),
    "teams": ("team", "teams",
              "A team grants its members and API tokens permissions on some or all of the "
              "organizer's events."),
    "team-members": ("team member", "team members", "A user who is a member of the team."),
    "team-invites": ("team invitation", "team invitations",
                     "An invitation by e-mail to join the team."),
    "team-tokens": ("team API token", "team API tokens",
                    "An API token acting with the team's permissions; the token itself is "
                    "shown once, when it is created."),
    "ticketlayouts": ("ticket layout", "ticket layouts",
                      "A ticket layout: where each text, QR code and image prints on the "
                      "ticket PDF, with an optional background PDF."),
    "ticketlayoutitems": ("product layout assignment", "product layout assignments",
                          "Which layout each product uses per sales channel."),
    "vouchers": ("voucher", "vouchers",
                 "A voucher code that unlocks, discounts or reserves products, usable a set "
                 "number of times."),
    "waitinglistentries": ("waiting list entry", "waiting list entries",
                           "Someone waiting for a sold-out product; when quota frees up they "
                           "are sent a voucher."),
    "webhooks": ("webhook", "webhooks",
                 "A webhook: an URL that receives a signed notification when orders and "
                 "other objects change."),
}  # fmt: skip

# action -> (summary template, description template); {a} is "a"/"an" + the singular
ACTIONS: dict[str, tuple[str, str]] = {
    "list": (
        "List {plural}",
        "Lists the {plural}, 50 a page (`page`; `page_size` makes pages smaller, or larger "
        "for the callers its description names), filtered "
        "by the query parameters; `ordering` sorts by the listed fields (a leading `-` for "
        "descending; names outside the list are ignored).",
    ),
    "create": (
        "Create {a}",
        "Creates {a} from the JSON body and answers it with 201. A field that is missing or "
        "not valid is a 400 naming the field.",
    ),
    "detail": (
        "Get {a}",
        "Answers one {singular} by its id. One of another organizer or event is 404, as a "
        "missing one is. The answer carries an `ETag` (`If-None-Match` gives 304).",
    ),
    "put": (
        "Replace {a}",
        "Replaces the {singular}: every required field must be in the body (a 400 names each "
        "missing one); an optional field left out keeps its stored value.",
    ),
    "patch": (
        "Update {a}",
        "Changes the fields given in the JSON body; the others keep their values.",
    ),
    "delete": (
        "Delete {a}",
        "Deletes the {singular} and answers 204 without a body. One still in use is refused "
        "with an error saying why.",
    ),
}


def _article(noun: str) -> str:
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def _access_of(route: APIRoute) -> Any:
    stack = [route.dependant]
    while stack:
        dep = stack.pop()
        call = dep.call
        if (call is not None and hasattr(call, "scope")) or type(call).__name__ in (
            "Authenticated",
            "DeviceAccess",
            "ProfileAccess",
            "NoCredentials",
            "ClientCredentials",
            "PublicAccess",
        ):
            return call
        stack.extend(dep.dependencies)
    return None


def permission_sentence(route: APIRoute) -> str:
    """Which credentials and permission the route's access check asks for."""
    access = _access_of(route)
    kind = type(access).__name__
    if kind == "ClientCredentials":
        return "**Credentials:** the OAuth application's client ID and secret."
    if kind == "NoCredentials":
        return "**Credentials:** none; a one-time secret in the body authenticates the call."
    if kind == "PublicAccess":
        return "**Credentials:** none (public); requests are limited per client address."
    if kind == "DeviceAccess":
        return "**Credentials:** a device token (`Authorization: Device <token>`)."
    if kind in ("Authenticated", "ProfileAccess") or access is None:
        return "**Credentials:** any valid token; the answer covers what it may see."
    where = "event" if getattr(access, "scope", "") == "event" else "organizer"
    permissions = getattr(access, "permissions", None) or (
        (access.permission,) if getattr(access, "permission", None) else ()
    )
    if not permissions:
        return f"**Permission:** any access to the {where} (no particular permission)."
    if len(permissions) > 3:
        return f"**Permission:** any permission on the {where}."
    named = " or ".join(f"`{p}`" for p in permissions)
    return f"**Permission:** {named} on the {where}."


def _crud(route: APIRoute, mounted: dict[str, Any]) -> tuple[str, str] | None:
    name, _, action = route.name.rpartition("-")
    resource = mounted.get(name)
    if resource is None or action not in ACTIONS:
        return None
    singular, plural, about = RESOURCES.get(name, (name, name, ""))
    summary, text = ACTIONS[action]
    values = {"a": _article(singular), "singular": singular, "plural": plural}
    return summary.format(**values), f"{text.format(**values)}\n\n{about}".strip()


def _plain(text: str) -> str:
    """Docstring text as Markdown: one paragraph per blank line, ``code`` as `code`."""
    text = inspect.cleandoc(text).replace("``", "`")
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    return "\n\n".join(p for p in paragraphs if p)


def _summary_and_text(route: APIRoute) -> tuple[str, str]:
    """A hand-written route's summary and description: its own ``summary``, else the first
    line of its docstring when that is a short title (no full stop), else its name."""
    text = _plain(route.description or "")
    first, _, rest = text.partition("\n\n")
    titled = bool(first) and len(first) <= 70 and not first.endswith(".")
    if route.summary:
        return route.summary, rest if titled else text
    if titled:
        return first, rest
    return route.name.replace("_", " ").replace("-", " ").capitalize(), text


def describe(operation: dict[str, Any], route: APIRoute, mounted: dict[str, Any]) -> None:
    """Sets the operation's summary and description (see the module docstring) and drops
    repeated tags."""
    crud = _crud(route, mounted)
    if crud is not None:
        operation["summary"], description = crud
    else:
        operation["summary"], description = _summary_and_text(route)
    operation["description"] = f"{description}\n\n{permission_sentence(route)}".strip()
    if "tags" in operation:
        operation["tags"] = list(dict.fromkeys(operation["tags"]))
