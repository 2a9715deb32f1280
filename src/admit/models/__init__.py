"""All SQLAlchemy models, imported here so metadata is complete wherever models are used."""

from admit.models.accounts import LoginFailure, LoginSession, UserTOTP
from admit.models.audit import AuditEntry
from admit.models.catalog import (
    Item,
    ItemAddOn,
    ItemBundle,
    ItemCategory,
    ItemVariation,
    TaxRule,
    category_cross_selling_items,
    item_required_membership_types,
)
from admit.models.checkin import (
    AutoCheckinRule,
    Checkin,
    CheckinList,
    Notification,
    RevokedSecret,
    auto_checkin_rule_items,
    auto_checkin_rule_variations,
    checkin_list_gates,
    checkin_list_items,
)
from admit.models.customers import Customer, Membership, MembershipType
from admit.models.deletion_stamp import DELETION_STAMP
from admit.models.devices import Device, Gate, device_limit_events
from admit.models.discounts import Discount, discount_benefit_items, discount_condition_items
from admit.models.events import Event
from admit.models.exports import ScheduledExport
from admit.models.files import UploadedFile
from admit.models.giftcards import GiftCard, GiftCardAcceptance, GiftCardTransaction
from admit.models.idempotency import IdempotencyKey
from admit.models.invoices import Invoice, InvoiceCounter, InvoiceLine
from admit.models.jobs import JOB_STATUSES, Job, PeriodicRun
from admit.models.mail import OutgoingMail
from admit.models.oauth import (
    OAuthApplication,
    OAuthCode,
    OAuthGrant,
    OAuthToken,
    oauth_grant_organizers,
)
from admit.models.order_stamp import ORDER_STAMP
from admit.models.orders import (
    Answer,
    CartPosition,
    Order,
    OrderFee,
    OrderPayment,
    OrderPosition,
    OrderRefund,
    PrintLog,
    answer_options,
)
from admit.models.organizers import Organizer
from admit.models.questions import Question, QuestionOption, question_items
from admit.models.quotas import Quota, SalesCount, quota_items, quota_variations
from admit.models.row_stamps import CHECKIN_STAMP, VOUCHER_STAMP
from admit.models.seating import Seat, SeatingPlan
from admit.models.sendmail import SendMailRecord, SendMailRule, sendmail_rule_items
from admit.models.subevents import (
    EventMetaProperty,
    SubEvent,
    SubEventItem,
    SubEventItemVariation,
)
from admit.models.teams import Team, TeamAPIToken, TeamInvite, team_limit_events, team_members
from admit.models.ticket_keys import BlockedSecret, EventTicketKey
from admit.models.tickets import TicketFile, TicketLayout, TicketLayoutItem
from admit.models.users import User
from admit.models.vouchers import Voucher
from admit.models.waitinglist import WaitingListEntry, WaitingListSettings
from admit.models.webhooks import Webhook, WebhookCall, WebhookCursor, webhook_limit_events

__all__ = [
    "CHECKIN_STAMP",
    "DELETION_STAMP",
    "JOB_STATUSES",
    "ORDER_STAMP",
    "VOUCHER_STAMP",
    "Answer",
    "AuditEntry",
    "AutoCheckinRule",
    "BlockedSecret",
    "CartPosition",
    "Checkin",
    "CheckinList",
    "Customer",
    "Device",
    "Discount",
    "Event",
    "EventMetaProperty",
    "EventTicketKey",
    "Gate",
    "GiftCard",
    "GiftCardAcceptance",
    "GiftCardTransaction",
    "IdempotencyKey",
    "Invoice",
    "InvoiceCounter",
    "InvoiceLine",
    "Item",
    "ItemAddOn",
    "ItemBundle",
    "ItemCategory",
    "ItemVariation",
    "Job",
    "LoginFailure",
    "LoginSession",
    "Membership",
    "MembershipType",
    "Notification",
    "OAuthApplication",
    "OAuthCode",
    "OAuthGrant",
    "OAuthToken",
    "Order",
    "OrderFee",
    "OrderPayment",
    "OrderPosition",
    "OrderRefund",
    "Organizer",
    "OutgoingMail",
    "PeriodicRun",
    "PrintLog",
    "Question",
    "QuestionOption",
    "Quota",
    "RevokedSecret",
    "SalesCount",
    "ScheduledExport",
    "Seat",
    "SeatingPlan",
    "SendMailRecord",
    "SendMailRule",
    "SubEvent",
    "SubEventItem",
    "SubEventItemVariation",
    "TaxRule",
    "Team",
    "TeamAPIToken",
    "TeamInvite",
    "TicketFile",
    "TicketLayout",
    "TicketLayoutItem",
    "UploadedFile",
    "User",
    "UserTOTP",
    "Voucher",
    "WaitingListEntry",
    "WaitingListSettings",
    "Webhook",
    "WebhookCall",
    "WebhookCursor",
    "answer_options",
    "auto_checkin_rule_items",
    "auto_checkin_rule_variations",
    "category_cross_selling_items",
    "checkin_list_gates",
    "checkin_list_items",
    "device_limit_events",
    "discount_benefit_items",
    "discount_condition_items",
    "item_required_membership_types",
    "oauth_grant_organizers",
    "question_items",
    "quota_items",
    "quota_variations",
    "sendmail_rule_items",
    "team_limit_events",
    "team_members",
    "webhook_limit_events",
]
