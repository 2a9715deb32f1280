"""All SQLAlchemy models, imported here so metadata is complete wherever models are used."""

from admit.models.catalog import (
    Item,
    ItemAddOn,
    ItemBundle,
    ItemCategory,
    ItemVariation,
    TaxRule,
    category_cross_selling_items,
)
from admit.models.discounts import Discount, discount_benefit_items, discount_condition_items
from admit.models.events import Event
from admit.models.mail import OutgoingMail
from admit.models.orders import (
    Answer,
    CartPosition,
    Order,
    OrderFee,
    OrderPayment,
    OrderPosition,
    answer_options,
)
from admit.models.organizers import Organizer
from admit.models.questions import Question, QuestionOption, question_items
from admit.models.quotas import Quota, quota_items, quota_variations
from admit.models.subevents import (
    EventMetaProperty,
    SubEvent,
    SubEventItem,
    SubEventItemVariation,
)
from admit.models.teams import Team, TeamAPIToken, TeamInvite, team_limit_events, team_members
from admit.models.users import User

__all__ = [
    "Answer",
    "CartPosition",
    "Discount",
    "Event",
    "EventMetaProperty",
    "Item",
    "ItemAddOn",
    "ItemBundle",
    "ItemCategory",
    "ItemVariation",
    "Order",
    "OrderFee",
    "OrderPayment",
    "OrderPosition",
    "Organizer",
    "OutgoingMail",
    "Question",
    "QuestionOption",
    "Quota",
    "SubEvent",
    "SubEventItem",
    "SubEventItemVariation",
    "TaxRule",
    "Team",
    "TeamAPIToken",
    "TeamInvite",
    "User",
    "answer_options",
    "category_cross_selling_items",
    "discount_benefit_items",
    "discount_condition_items",
    "question_items",
    "quota_items",
    "quota_variations",
    "team_limit_events",
    "team_members",
]
