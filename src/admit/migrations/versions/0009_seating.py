"""seating: seating plans and the seats of events and dates

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "seating_plans",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=190), nullable=False),
        sa.Column(
            "layout",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_modified", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_seating_plans_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seating_plans")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("seating_plans", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_seating_plans_organizer_id"), ["organizer_id"], unique=False
        )

    op.create_table(
        "seats",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("subevent_id", sa.Integer(), nullable=True),
        sa.Column("zone_name", sa.String(length=190), nullable=False),
        sa.Column("row_name", sa.String(length=190), nullable=False),
        sa.Column("row_label", sa.String(length=190), nullable=True),
        sa.Column("seat_number", sa.String(length=190), nullable=False),
        sa.Column("seat_label", sa.String(length=190), nullable=True),
        sa.Column("seat_guid", sa.String(length=190), nullable=False),
        sa.Column("product_id", sa.Integer(), nullable=True),
        sa.Column("blocked", sa.Boolean(), nullable=False),
        sa.Column("sorting_rank", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"], ["events.id"], name=op.f("fk_seats_event_id_events"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["product_id"],
            ["items.id"],
            name=op.f("fk_seats_product_id_items"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["subevent_id"],
            ["subevents.id"],
            name=op.f("fk_seats_subevent_id_subevents"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seats")),
        sa.UniqueConstraint(
            "event_id",
            "subevent_id",
            "seat_guid",
            name=op.f("uq_seats_event_id_subevent_id_seat_guid"),
        ),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.create_index(
            "ix_seats_event_subevent_rank",
            ["event_id", "subevent_id", "sorting_rank"],
            unique=False,
        )
        batch_op.create_index(batch_op.f("ix_seats_product_id"), ["product_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_seats_subevent_id"), ["subevent_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("seats", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_seats_subevent_id"))
        batch_op.drop_index(batch_op.f("ix_seats_product_id"))
        batch_op.drop_index("ix_seats_event_subevent_rank")

    op.drop_table("seats")
    with op.batch_alter_table("seating_plans", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_seating_plans_organizer_id"))

    op.drop_table("seating_plans")
