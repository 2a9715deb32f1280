"""Invoices (``invoices``, ``invoice_lines``) and the counters their numbers come from
(``invoice_counters``, one row per organizer and prefix, incremented under its row lock).

Revision ID: 0028_invoices
Revises: 0028_signed_secrets
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import admit.db

revision: str = "0028_invoices"
down_revision: str | None = "0028_signed_secrets"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "invoice_counters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.Column("prefix", sa.String(length=190), nullable=False),
        sa.Column("last", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_invoice_counters_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_invoice_counters")),
        sa.UniqueConstraint(
            "organizer_id", "prefix", name=op.f("uq_invoice_counters_organizer_id_prefix")
        ),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "invoices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("order_id", sa.Integer(), nullable=False),
        sa.Column("prefix", sa.String(length=160), nullable=False),
        sa.Column("invoice_no", sa.String(length=40), nullable=False),
        sa.Column("full_invoice_no", sa.String(length=200), nullable=False),
        sa.Column("is_cancellation", sa.Boolean(), nullable=False),
        sa.Column("refers_id", sa.Integer(), nullable=True),
        sa.Column("date", sa.Date(), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("locale", sa.String(length=32), nullable=False),
        sa.Column("currency", sa.String(length=10), nullable=False),
        sa.Column("invoice_from_name", sa.String(length=255), nullable=False),
        sa.Column("invoice_from", sa.Text(), nullable=False),
        sa.Column("invoice_from_zipcode", sa.String(length=30), nullable=False),
        sa.Column("invoice_from_city", sa.String(length=255), nullable=False),
        sa.Column("invoice_from_state", sa.String(length=255), nullable=False),
        sa.Column("invoice_from_country", sa.String(length=2), nullable=False),
        sa.Column("invoice_from_tax_id", sa.String(length=255), nullable=False),
        sa.Column("invoice_from_vat_id", sa.String(length=255), nullable=False),
        sa.Column("invoice_to", sa.Text(), nullable=False),
        sa.Column("invoice_to_is_business", sa.Boolean(), nullable=True),
        sa.Column("invoice_to_company", sa.String(length=255), nullable=False),
        sa.Column("invoice_to_name", sa.String(length=255), nullable=False),
        sa.Column("invoice_to_street", sa.Text(), nullable=False),
        sa.Column("invoice_to_zipcode", sa.String(length=30), nullable=False),
        sa.Column("invoice_to_city", sa.String(length=255), nullable=False),
        sa.Column("invoice_to_state", sa.String(length=255), nullable=True),
        sa.Column("invoice_to_country", sa.String(length=2), nullable=True),
        sa.Column("invoice_to_vat_id", sa.String(length=255), nullable=False),
        sa.Column("invoice_to_beneficiary", sa.Text(), nullable=False),
        sa.Column("custom_field", sa.String(length=255), nullable=True),
        sa.Column("internal_reference", sa.Text(), nullable=False),
        sa.Column("introductory_text", sa.Text(), nullable=False),
        sa.Column("additional_text", sa.Text(), nullable=False),
        sa.Column("payment_provider_text", sa.Text(), nullable=False),
        sa.Column("payment_provider_stamp", sa.String(length=100), nullable=True),
        sa.Column("footer_text", sa.Text(), nullable=False),
        sa.Column("reverse_charge", sa.Boolean(), nullable=False),
        sa.Column("due_date", sa.Date(), nullable=True),
        sa.Column("total", sa.Numeric(precision=13, scale=2), nullable=False),
        sa.Column("file_key", sa.String(length=255), nullable=True),
        sa.Column(
            "render_job_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_invoices_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["order_id"],
            ["orders.id"],
            name=op.f("fk_invoices_order_id_orders"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_invoices_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["refers_id"],
            ["invoices.id"],
            name=op.f("fk_invoices_refers_id_invoices"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["render_job_id"],
            ["jobs.id"],
            name=op.f("fk_invoices_render_job_id_jobs"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_invoices")),
        sa.UniqueConstraint(
            "organizer_id",
            "prefix",
            "invoice_no",
            name=op.f("uq_invoices_organizer_id_prefix_invoice_no"),
        ),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("invoices", schema=None) as batch_op:
        batch_op.create_index(
            "ix_invoices_event_number", ["event_id", "full_invoice_no"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_invoices_order_id"), ["order_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_invoices_refers_id"), ["refers_id"], unique=False)

    op.create_table(
        "invoice_lines",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("invoice_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=True),
        sa.Column("variation_id", sa.Integer(), nullable=True),
        sa.Column("subevent_id", sa.Integer(), nullable=True),
        sa.Column("fee_type", sa.String(length=32), nullable=True),
        sa.Column("fee_internal_type", sa.String(length=190), nullable=True),
        sa.Column("event_date_from", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("event_date_to", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("event_location", sa.Text(), nullable=True),
        sa.Column("attendee_name", sa.String(length=255), nullable=True),
        sa.Column("gross_value", sa.Numeric(precision=13, scale=2), nullable=False),
        sa.Column("tax_value", sa.Numeric(precision=13, scale=2), nullable=False),
        sa.Column("tax_rate", sa.Numeric(precision=10, scale=2), nullable=False),
        sa.Column("tax_name", sa.String(length=190), nullable=False),
        sa.Column("tax_code", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(
            ["invoice_id"],
            ["invoices.id"],
            name=op.f("fk_invoice_lines_invoice_id_invoices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_invoice_lines")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("invoice_lines", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_invoice_lines_invoice_id"), ["invoice_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("invoice_lines", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_invoice_lines_invoice_id"))

    op.drop_table("invoice_lines")
    with op.batch_alter_table("invoices", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_invoices_refers_id"))
        batch_op.drop_index(batch_op.f("ix_invoices_order_id"))
        batch_op.drop_index("ix_invoices_event_number")

    op.drop_table("invoices")
    op.drop_table("invoice_counters")
