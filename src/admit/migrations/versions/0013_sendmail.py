"""Scheduled e-mail rules (plugin ``sendmail``) and the record of the mails they sent.

Revision ID: 0013
Revises: 0012
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "sendmail_rules",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("subject", JSON, nullable=False),
        sa.Column("template", JSON, nullable=False),
        sa.Column("all_products", sa.Boolean(), nullable=False),
        sa.Column("restrict_to_status", JSON, nullable=False),
        sa.Column("checked_in_status", sa.String(length=16), nullable=True),
        sa.Column("date_is_absolute", sa.Boolean(), nullable=False),
        sa.Column("send_date", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("send_offset_days", sa.Integer(), nullable=True),
        sa.Column("send_offset_time", sa.Time(), nullable=True),
        sa.Column("offset_to_event_end", sa.Boolean(), nullable=False),
        sa.Column("offset_is_after", sa.Boolean(), nullable=False),
        sa.Column("send_to", sa.String(length=16), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_sendmail_rules_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sendmail_rules")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("sendmail_rules", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sendmail_rules_event_id"), ["event_id"], unique=False)

    op.create_table(
        "sendmail_records",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rule_id", sa.Integer(), nullable=False),
        sa.Column("order_id", sa.Integer(), nullable=False),
        sa.Column("position_id", sa.Integer(), nullable=False),
        sa.Column("subevent_id", sa.Integer(), nullable=False),
        sa.Column("mail_id", sa.Integer(), nullable=True),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["order_id"],
            ["orders.id"],
            name=op.f("fk_sendmail_records_order_id_orders"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["rule_id"],
            ["sendmail_rules.id"],
            name=op.f("fk_sendmail_records_rule_id_sendmail_rules"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sendmail_records")),
        sa.UniqueConstraint(
            "rule_id",
            "order_id",
            "position_id",
            "subevent_id",
            name=op.f("uq_sendmail_records_rule_id_order_id_position_id_subevent_id"),
        ),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("sendmail_records", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sendmail_records_order_id"), ["order_id"], unique=False
        )

    op.create_table(
        "sendmail_rule_items",
        sa.Column("rule_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["items.id"],
            name=op.f("fk_sendmail_rule_items_item_id_items"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["rule_id"],
            ["sendmail_rules.id"],
            name=op.f("fk_sendmail_rule_items_rule_id_sendmail_rules"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("rule_id", "item_id", name=op.f("pk_sendmail_rule_items")),
    )
    with op.batch_alter_table("sendmail_rule_items", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sendmail_rule_items_item_id"), ["item_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("sendmail_rule_items", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sendmail_rule_items_item_id"))
    op.drop_table("sendmail_rule_items")

    with op.batch_alter_table("sendmail_records", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sendmail_records_order_id"))
    op.drop_table("sendmail_records")

    with op.batch_alter_table("sendmail_rules", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sendmail_rules_event_id"))
    op.drop_table("sendmail_rules")
