"""Uploaded files, ticket layouts with their product assignments, rendered ticket files, and
scheduled exports.

Revision ID: 0014
Revises: 0013
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "uploaded_files",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uuid", sa.String(length=32), nullable=False),
        sa.Column("owner_kind", sa.String(length=16), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("content_type", sa.String(length=128), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_uploaded_files")),
        sa.UniqueConstraint("uuid", name=op.f("uq_uploaded_files_uuid")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("uploaded_files", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_uploaded_files_expires"), ["expires"], unique=False)

    op.create_table(
        "ticket_layouts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=190), nullable=False),
        sa.Column("default", sa.Boolean(), nullable=False),
        sa.Column(
            "layout",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("background_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["background_id"],
            ["uploaded_files.id"],
            name=op.f("fk_ticket_layouts_background_id_uploaded_files"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_ticket_layouts_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ticket_layouts")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("ticket_layouts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_ticket_layouts_background_id"), ["background_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_ticket_layouts_event_id"), ["event_id"], unique=False)

    op.create_table(
        "scheduled_exports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=True),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("export_identifier", sa.String(length=190), nullable=False),
        sa.Column(
            "export_form_data",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("locale", sa.String(length=32), nullable=False),
        sa.Column("mail_additional_recipients", sa.Text(), nullable=False),
        sa.Column("mail_additional_recipients_cc", sa.Text(), nullable=False),
        sa.Column("mail_additional_recipients_bcc", sa.Text(), nullable=False),
        sa.Column("mail_subject", sa.String(length=255), nullable=False),
        sa.Column("mail_template", sa.Text(), nullable=False),
        sa.Column("schedule_rrule", sa.Text(), nullable=False),
        sa.Column("schedule_rrule_time", sa.Time(), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("schedule_next_run", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("error_counter", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_scheduled_exports_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["jobs.id"],
            name=op.f("fk_scheduled_exports_job_id_jobs"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_scheduled_exports_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_scheduled_exports_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scheduled_exports")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("scheduled_exports", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_scheduled_exports_event_id"), ["event_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_scheduled_exports_organizer_id"), ["organizer_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_scheduled_exports_owner_id"), ["owner_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_scheduled_exports_schedule_next_run"),
            ["schedule_next_run"],
            unique=False,
        )

    op.create_table(
        "ticket_files",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("target", sa.String(length=40), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("job_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_ticket_files_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_ticket_files_job_id_jobs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ticket_files")),
        sa.UniqueConstraint(
            "target", "fingerprint", name=op.f("uq_ticket_files_target_fingerprint")
        ),
    )
    with op.batch_alter_table("ticket_files", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ticket_files_event_id"), ["event_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_ticket_files_job_id"), ["job_id"], unique=False)

    op.create_table(
        "ticket_layout_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("layout_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("sales_channel", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["items.id"],
            name=op.f("fk_ticket_layout_items_item_id_items"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["layout_id"],
            ["ticket_layouts.id"],
            name=op.f("fk_ticket_layout_items_layout_id_ticket_layouts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ticket_layout_items")),
        sa.UniqueConstraint(
            "item_id", "sales_channel", name=op.f("uq_ticket_layout_items_item_id_sales_channel")
        ),
    )
    with op.batch_alter_table("ticket_layout_items", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_ticket_layout_items_layout_id"), ["layout_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("ticket_layout_items", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ticket_layout_items_layout_id"))

    op.drop_table("ticket_layout_items")
    with op.batch_alter_table("ticket_files", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ticket_files_job_id"))
        batch_op.drop_index(batch_op.f("ix_ticket_files_event_id"))

    op.drop_table("ticket_files")
    with op.batch_alter_table("scheduled_exports", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_scheduled_exports_schedule_next_run"))
        batch_op.drop_index(batch_op.f("ix_scheduled_exports_owner_id"))
        batch_op.drop_index(batch_op.f("ix_scheduled_exports_organizer_id"))
        batch_op.drop_index(batch_op.f("ix_scheduled_exports_event_id"))

    op.drop_table("scheduled_exports")
    with op.batch_alter_table("ticket_layouts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ticket_layouts_event_id"))
        batch_op.drop_index(batch_op.f("ix_ticket_layouts_background_id"))

    op.drop_table("ticket_layouts")
    with op.batch_alter_table("uploaded_files", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_uploaded_files_expires"))

    op.drop_table("uploaded_files")
