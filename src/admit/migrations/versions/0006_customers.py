"""customers: customer accounts, membership types, memberships

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "customers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.Column("identifier", sa.String(length=32), nullable=False),
        sa.Column("external_identifier", sa.String(length=255), nullable=True),
        sa.Column("email", sa.String(length=190), nullable=True),
        sa.Column("phone", sa.String(length=64), nullable=True),
        sa.Column("name_cached", sa.String(length=255), nullable=True),
        sa.Column("name_parts", JSON, nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=True),
        sa.Column("is_active", sa.Boolean(), nullable=False),
        sa.Column("is_verified", sa.Boolean(), nullable=False),
        sa.Column("locale", sa.String(length=32), nullable=False),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.Column("date_joined", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_login", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_modified", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_customers_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_customers")),
        sa.UniqueConstraint(
            "organizer_id", "identifier", name=op.f("uq_customers_organizer_id_identifier")
        ),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("customers", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_customers_email"), ["email"], unique=False)

    op.create_table(
        "membership_types",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.Column("name", JSON, nullable=False),
        sa.Column("transferable", sa.Boolean(), nullable=False),
        sa.Column("allow_parallel_usage", sa.Boolean(), nullable=False),
        sa.Column("max_usages", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_membership_types_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_membership_types")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("membership_types", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_membership_types_organizer_id"), ["organizer_id"], unique=False
        )

    op.create_table(
        "memberships",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.Column("customer_id", sa.Integer(), nullable=False),
        sa.Column("membership_type_id", sa.Integer(), nullable=False),
        sa.Column("date_start", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("date_end", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("attendee_name_parts", JSON, nullable=False),
        sa.Column("canceled", sa.Boolean(), nullable=False),
        sa.Column("testmode", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["customer_id"],
            ["customers.id"],
            name=op.f("fk_memberships_customer_id_customers"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["membership_type_id"],
            ["membership_types.id"],
            name=op.f("fk_memberships_membership_type_id_membership_types"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_memberships_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memberships")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("memberships", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_memberships_customer_id"), ["customer_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_memberships_membership_type_id"), ["membership_type_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_memberships_organizer_id"), ["organizer_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("memberships", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_memberships_organizer_id"))
        batch_op.drop_index(batch_op.f("ix_memberships_membership_type_id"))
        batch_op.drop_index(batch_op.f("ix_memberships_customer_id"))
    op.drop_table("memberships")
    with op.batch_alter_table("membership_types", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_membership_types_organizer_id"))
    op.drop_table("membership_types")
    with op.batch_alter_table("customers", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_customers_email"))
    op.drop_table("customers")
