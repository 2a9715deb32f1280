"""Field parity: item sale/validity/membership/media settings, order and position client
data, print logs, the minimum answer length of text questions.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-24 23:00:38.285501
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "item_required_membership_types",
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("membership_type_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["items.id"],
            name=op.f("fk_item_required_membership_types_item_id_items"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["membership_type_id"],
            ["membership_types.id"],
            name=op.f("fk_item_required_membership_types_membership_type_id_membership_types"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "item_id", "membership_type_id", name=op.f("pk_item_required_membership_types")
        ),
    )
    with op.batch_alter_table("item_required_membership_types", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_item_required_membership_types_membership_type_id"),
            ["membership_type_id"],
            unique=False,
        )

    op.create_table(
        "print_logs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("position_id", sa.Integer(), nullable=False),
        sa.Column("datetime", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=255), nullable=False),
        sa.Column(
            "info",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("device_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["device_id"],
            ["devices.id"],
            name=op.f("fk_print_logs_device_id_devices"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["position_id"],
            ["order_positions.id"],
            name=op.f("fk_print_logs_position_id_order_positions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_print_logs")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("print_logs", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_print_logs_position_id"), ["position_id"], unique=False
        )

    with op.batch_alter_table("items", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "available_from_mode",
                sa.String(length=16),
                nullable=False,
                server_default=sa.text("'hide'"),
            )
        )
        batch_op.add_column(
            sa.Column(
                "available_until_mode",
                sa.String(length=16),
                nullable=False,
                server_default=sa.text("'hide'"),
            )
        )
        batch_op.add_column(sa.Column("hidden_if_available_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("hidden_if_item_available_id", sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column(
                "hidden_if_item_available_mode",
                sa.String(length=16),
                nullable=False,
                server_default=sa.text("'hide'"),
            )
        )
        batch_op.add_column(
            sa.Column("require_membership", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch_op.add_column(
            sa.Column(
                "require_membership_hidden", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )
        batch_op.add_column(sa.Column("grant_membership_type_id", sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column(
                "grant_membership_duration_like_event",
                sa.Boolean(),
                nullable=False,
                server_default=sa.true(),
            )
        )
        batch_op.add_column(
            sa.Column(
                "grant_membership_duration_days",
                sa.Integer(),
                nullable=False,
                server_default=sa.text("0"),
            )
        )
        batch_op.add_column(
            sa.Column(
                "grant_membership_duration_months",
                sa.Integer(),
                nullable=False,
                server_default=sa.text("0"),
            )
        )
        batch_op.add_column(sa.Column("media_policy", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("media_type", sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column("validity_mode", sa.String(length=16), nullable=True))
        batch_op.add_column(
            sa.Column("validity_fixed_from", admit.db.UTCDateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(
            sa.Column("validity_fixed_until", admit.db.UTCDateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(
            sa.Column("validity_dynamic_duration_minutes", sa.Integer(), nullable=True)
        )
        batch_op.add_column(
            sa.Column("validity_dynamic_duration_hours", sa.Integer(), nullable=True)
        )
        batch_op.add_column(
            sa.Column("validity_dynamic_duration_days", sa.Integer(), nullable=True)
        )
        batch_op.add_column(
            sa.Column("validity_dynamic_duration_months", sa.Integer(), nullable=True)
        )
        batch_op.add_column(
            sa.Column(
                "validity_dynamic_start_choice",
                sa.Boolean(),
                nullable=False,
                server_default=sa.false(),
            )
        )
        batch_op.add_column(
            sa.Column("validity_dynamic_start_choice_day_limit", sa.Integer(), nullable=True)
        )
        batch_op.create_index(
            batch_op.f("ix_items_grant_membership_type_id"),
            ["grant_membership_type_id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_items_hidden_if_available_id"), ["hidden_if_available_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_items_hidden_if_item_available_id"),
            ["hidden_if_item_available_id"],
            unique=False,
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_items_hidden_if_available_id_quotas"),
            "quotas",
            ["hidden_if_available_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_items_grant_membership_type_id_membership_types"),
            "membership_types",
            ["grant_membership_type_id"],
            ["id"],
            ondelete="RESTRICT",
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_items_hidden_if_item_available_id_items"),
            "items",
            ["hidden_if_item_available_id"],
            ["id"],
            ondelete="SET NULL",
        )

    with op.batch_alter_table("memberships", schema=None) as batch_op:
        batch_op.add_column(sa.Column("granted_in_id", sa.Integer(), nullable=True))
        batch_op.create_unique_constraint(
            batch_op.f("uq_memberships_granted_in_id"), ["granted_in_id"]
        )

    with op.batch_alter_table("order_positions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "plugin_data",
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                nullable=False,
                server_default=sa.text("'{}'"),
            )
        )
        batch_op.add_column(
            sa.Column("has_print_logs", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch_op.add_column(sa.Column("used_membership_id", sa.Integer(), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_order_positions_used_membership_id"),
            ["used_membership_id"],
            unique=False,
        )
        batch_op.create_foreign_key(
            batch_op.f("fk_order_positions_used_membership_id_memberships"),
            "memberships",
            ["used_membership_id"],
            ["id"],
            ondelete="SET NULL",
        )

    with op.batch_alter_table("orders", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "api_meta",
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                nullable=False,
                server_default=sa.text("'{}'"),
            )
        )
        batch_op.add_column(
            sa.Column(
                "plugin_data",
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                nullable=False,
                server_default=sa.text("'{}'"),
            )
        )
        batch_op.add_column(sa.Column("custom_followup_at", sa.Date(), nullable=True))
        batch_op.add_column(
            sa.Column(
                "tax_rounding_mode",
                sa.String(length=100),
                nullable=False,
                server_default=sa.text("'line'"),
            )
        )

    with op.batch_alter_table("questions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("valid_string_length_min", sa.Integer(), nullable=True))

    # The server defaults stay: the models set every value themselves, and writers of raw SQL
    # (bulk loads such as bench/export.py, or a tool outside Admit) need not name new columns.


def downgrade() -> None:
    with op.batch_alter_table("questions", schema=None) as batch_op:
        batch_op.drop_column("valid_string_length_min")

    with op.batch_alter_table("orders", schema=None) as batch_op:
        batch_op.drop_column("tax_rounding_mode")
        batch_op.drop_column("custom_followup_at")
        batch_op.drop_column("plugin_data")
        batch_op.drop_column("api_meta")

    with op.batch_alter_table("order_positions", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_order_positions_used_membership_id_memberships"), type_="foreignkey"
        )
        batch_op.drop_index(batch_op.f("ix_order_positions_used_membership_id"))
        batch_op.drop_column("used_membership_id")
        batch_op.drop_column("has_print_logs")
        batch_op.drop_column("plugin_data")

    with op.batch_alter_table("memberships", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_memberships_granted_in_id"), type_="unique")
        batch_op.drop_column("granted_in_id")

    with op.batch_alter_table("items", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_items_hidden_if_item_available_id_items"), type_="foreignkey"
        )
        batch_op.drop_constraint(
            batch_op.f("fk_items_grant_membership_type_id_membership_types"), type_="foreignkey"
        )
        batch_op.drop_constraint(
            batch_op.f("fk_items_hidden_if_available_id_quotas"), type_="foreignkey"
        )
        batch_op.drop_index(batch_op.f("ix_items_hidden_if_item_available_id"))
        batch_op.drop_index(batch_op.f("ix_items_hidden_if_available_id"))
        batch_op.drop_index(batch_op.f("ix_items_grant_membership_type_id"))
        batch_op.drop_column("validity_dynamic_start_choice_day_limit")
        batch_op.drop_column("validity_dynamic_start_choice")
        batch_op.drop_column("validity_dynamic_duration_months")
        batch_op.drop_column("validity_dynamic_duration_days")
        batch_op.drop_column("validity_dynamic_duration_hours")
        batch_op.drop_column("validity_dynamic_duration_minutes")
        batch_op.drop_column("validity_fixed_until")
        batch_op.drop_column("validity_fixed_from")
        batch_op.drop_column("validity_mode")
        batch_op.drop_column("media_type")
        batch_op.drop_column("media_policy")
        batch_op.drop_column("grant_membership_duration_months")
        batch_op.drop_column("grant_membership_duration_days")
        batch_op.drop_column("grant_membership_duration_like_event")
        batch_op.drop_column("grant_membership_type_id")
        batch_op.drop_column("require_membership_hidden")
        batch_op.drop_column("require_membership")
        batch_op.drop_column("hidden_if_item_available_mode")
        batch_op.drop_column("hidden_if_item_available_id")
        batch_op.drop_column("hidden_if_available_id")
        batch_op.drop_column("available_until_mode")
        batch_op.drop_column("available_from_mode")

    with op.batch_alter_table("print_logs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_print_logs_position_id"))

    op.drop_table("print_logs")
    with op.batch_alter_table("item_required_membership_types", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_item_required_membership_types_membership_type_id"))

    op.drop_table("item_required_membership_types")
