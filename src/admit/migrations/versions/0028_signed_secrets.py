"""Signed ticket secrets: the event's generator and public keys, its key pairs, blocked secrets.

``events.ticket_secret_generator`` (``random`` for every existing event, so nothing changes for
them) and ``events.valid_keys`` (the public keys published on the event); ``event_ticket_keys``
holds each event's Ed25519 key pair, ``blocked_ticket_secrets`` the block list scanners sync.
Revoked secrets get an index for the scanners' ``created_since`` sync; check-ins keep the
product, variation and date an offline scanner reported for a failed scan.

Revision ID: 0028_signed_secrets
Revises: 0027
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0028_signed_secrets"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
UTC = sa.DateTime(timezone=True)


def upgrade() -> None:
    # Plain ADD COLUMN (also on SQLite): a batch copy of ``events`` would drop its triggers.
    op.add_column(
        "events",
        sa.Column(
            "ticket_secret_generator", sa.String(length=32), nullable=False,
            server_default="random",
        ),
    )  # fmt: skip
    op.add_column(
        "events", sa.Column("valid_keys", JSON, nullable=False, server_default=sa.text("'{}'"))
    )
    op.create_table(
        "event_ticket_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("scheme", sa.String(length=32), nullable=False),
        sa.Column("public_key", sa.Text(), nullable=False),
        sa.Column("private_key", sa.Text(), nullable=False),
        sa.Column("created", UTC, nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_event_ticket_keys_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_ticket_keys")),
        sa.UniqueConstraint("event_id", "scheme", name="uq_event_ticket_keys_event_scheme"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "blocked_ticket_secrets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("position_id", sa.Integer(), nullable=True),
        sa.Column("secret", sa.String(length=255), nullable=False),
        sa.Column("blocked", sa.Boolean(), nullable=False),
        sa.Column("updated", UTC, nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_blocked_ticket_secrets_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["position_id"],
            ["order_positions.id"],
            name=op.f("fk_blocked_ticket_secrets_position_id_order_positions"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_blocked_ticket_secrets")),
        sa.UniqueConstraint("event_id", "secret", name="uq_blocked_ticket_secrets_event_secret"),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_blocked_ticket_secrets_event_updated",
        "blocked_ticket_secrets",
        ["event_id", "updated"],
    )
    op.create_index(
        op.f("ix_blocked_ticket_secrets_position_id"), "blocked_ticket_secrets", ["position_id"]
    )
    op.create_index(
        "ix_revoked_ticket_secrets_event_created", "revoked_ticket_secrets", ["event_id", "created"]
    )
    for column in ("raw_item_id", "raw_variation_id", "raw_subevent_id"):
        op.add_column("checkins", sa.Column(column, sa.Integer(), nullable=True))


def downgrade() -> None:
    for column in ("raw_subevent_id", "raw_variation_id", "raw_item_id"):
        op.drop_column("checkins", column)
    op.drop_index("ix_revoked_ticket_secrets_event_created", table_name="revoked_ticket_secrets")
    op.drop_index(
        op.f("ix_blocked_ticket_secrets_position_id"), table_name="blocked_ticket_secrets"
    )
    op.drop_index("ix_blocked_ticket_secrets_event_updated", table_name="blocked_ticket_secrets")
    op.drop_table("blocked_ticket_secrets")
    op.drop_table("event_ticket_keys")
    op.drop_column("events", "valid_keys")
    op.drop_column("events", "ticket_secret_generator")
