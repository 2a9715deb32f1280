"""The audit log of configuration changes (``audit_log``: the event and its categories,
questions, tax rules, check-in lists, discounts and dates; the organizer's devices, teams and
webhooks), so their pages in the back office show who changed what. Changes made before have no
rows.

Revision ID: 0033_audit
Revises: 0032_control6
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0033_audit"
down_revision: str | None = "0032_control6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=True),
        sa.Column("object_type", sa.String(length=32), nullable=False),
        sa.Column("object_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column(
            "fields",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("actor_kind", sa.String(length=16), nullable=True),
        sa.Column("actor_id", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_audit_log_object", "audit_log", ["object_type", "object_id", "created"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_audit_log_object", table_name="audit_log")
    op.drop_table("audit_log")
