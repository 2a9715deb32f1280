"""Background work: jobs, the scheduler's period claims, and a richer mail outbox.

Revision ID: 0011
Revises: 0010
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "periodic_runs",
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("period", sa.BigInteger(), nullable=False),
        sa.Column("running", sa.Boolean(), nullable=False),
        sa.Column("owner", sa.String(length=128), nullable=True),
        sa.Column("lease_until", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_started", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_finished", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_periodic_runs")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("uuid", sa.String(length=32), nullable=False),
        sa.Column("secret", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=True),
        sa.Column("event_id", sa.Integer(), nullable=True),
        sa.Column("owner_kind", sa.String(length=16), nullable=True),
        sa.Column("owner_id", sa.Integer(), nullable=True),
        sa.Column(
            "input",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("percentage", sa.Integer(), nullable=True),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("result_key", sa.String(length=255), nullable=True),
        sa.Column("result_name", sa.String(length=255), nullable=True),
        sa.Column("result_type", sa.String(length=128), nullable=True),
        sa.Column("result_size", sa.BigInteger(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("worker", sa.String(length=128), nullable=True),
        sa.Column("lease_until", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("run_after", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("enqueued_at", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("started", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("finished", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("expires", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["event_id"], ["events.id"], name=op.f("fk_jobs_event_id_events"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_jobs_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
        sa.UniqueConstraint("uuid", name=op.f("uq_jobs_uuid")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_jobs_event_id"), ["event_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_jobs_expires"), ["expires"], unique=False)
        batch_op.create_index(batch_op.f("ix_jobs_kind"), ["kind"], unique=False)
        batch_op.create_index(batch_op.f("ix_jobs_organizer_id"), ["organizer_id"], unique=False)
        batch_op.create_index("ix_jobs_status_lease_until", ["status", "lease_until"], unique=False)
        batch_op.create_index("ix_jobs_status_run_after", ["status", "run_after"], unique=False)

    with op.batch_alter_table("outgoing_mails", schema=None) as batch_op:
        batch_op.add_column(sa.Column("cc", JSON, server_default="[]", nullable=False))
        batch_op.add_column(sa.Column("bcc", JSON, server_default="[]", nullable=False))
        batch_op.add_column(sa.Column("html", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("attachments", JSON, server_default="[]", nullable=False))
        batch_op.add_column(sa.Column("attempts", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("message_id", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("job_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("outgoing_mails", schema=None) as batch_op:
        batch_op.drop_column("job_id")
        batch_op.drop_column("message_id")
        batch_op.drop_column("attempts")
        batch_op.drop_column("attachments")
        batch_op.drop_column("html")
        batch_op.drop_column("bcc")
        batch_op.drop_column("cc")

    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_jobs_status_run_after")
        batch_op.drop_index("ix_jobs_status_lease_until")
        batch_op.drop_index(batch_op.f("ix_jobs_organizer_id"))
        batch_op.drop_index(batch_op.f("ix_jobs_kind"))
        batch_op.drop_index(batch_op.f("ix_jobs_expires"))
        batch_op.drop_index(batch_op.f("ix_jobs_event_id"))

    op.drop_table("jobs")
    op.drop_table("periodic_runs")
