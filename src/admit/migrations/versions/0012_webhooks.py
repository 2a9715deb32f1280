"""Webhooks: the webhooks, their delivery log and the fan-out's cursors.

Revision ID: 0012
Revises: 0011
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "webhook_cursors",
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("gaps", JSON, nullable=False),
        sa.Column("updated", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("source", name=op.f("pk_webhook_cursors")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "webhooks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("target_url", sa.String(length=1000), nullable=False),
        sa.Column("all_events", sa.Boolean(), nullable=False),
        sa.Column("action_types", JSON, nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("secret", sa.String(length=64), nullable=False),
        sa.Column("previous_secret", sa.String(length=64), nullable=True),
        sa.Column("previous_secret_until", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("wake_at", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("blocked_until", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("failure_streak", sa.Integer(), nullable=False),
        sa.Column("lock_owner", sa.String(length=64), nullable=True),
        sa.Column("lock_until", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_webhooks_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhooks")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_webhooks_organizer_id"), ["organizer_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_webhooks_wake_at"), ["wake_at"], unique=False)

    op.create_table(
        "webhook_calls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("webhook_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=190), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("response_body", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("next_retry", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_attempt", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("redelivery_of", sa.Integer(), nullable=True),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["webhook_id"],
            ["webhooks.id"],
            name=op.f("fk_webhook_calls_webhook_id_webhooks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_calls")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("webhook_calls", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhook_calls_created"), ["created"], unique=False)
        batch_op.create_index(
            "ix_webhook_calls_webhook_status_id", ["webhook_id", "status", "id"], unique=False
        )

    op.create_table(
        "webhook_limit_events",
        sa.Column("webhook_id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_webhook_limit_events_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["webhook_id"],
            ["webhooks.id"],
            name=op.f("fk_webhook_limit_events_webhook_id_webhooks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("webhook_id", "event_id", name=op.f("pk_webhook_limit_events")),
    )
    with op.batch_alter_table("webhook_limit_events", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_webhook_limit_events_event_id"), ["event_id"], unique=False
        )

    # The fan-out starts at the present: what happened before webhooks existed is not sent.
    for source, table in (("notification", "notifications"), ("checkin", "checkins")):
        op.execute(
            f"INSERT INTO webhook_cursors (source, position, gaps, updated) "
            f"SELECT '{source}', COALESCE(MAX(id), 0), '{{}}', CURRENT_TIMESTAMP FROM {table}"
        )


def downgrade() -> None:
    with op.batch_alter_table("webhook_limit_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_limit_events_event_id"))
    op.drop_table("webhook_limit_events")

    with op.batch_alter_table("webhook_calls", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_calls_webhook_status_id")
        batch_op.drop_index(batch_op.f("ix_webhook_calls_created"))
    op.drop_table("webhook_calls")

    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhooks_wake_at"))
        batch_op.drop_index(batch_op.f("ix_webhooks_organizer_id"))
    op.drop_table("webhooks")
    op.drop_table("webhook_cursors")
