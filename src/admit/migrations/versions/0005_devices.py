"""devices: devices, their event limits, gates

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "gates",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=190), nullable=False),
        sa.Column("identifier", sa.String(length=190), nullable=False),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_gates_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gates")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("gates", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_gates_organizer_id"), ["organizer_id"], unique=False)

    op.create_table(
        "devices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.Column("device_id", sa.Integer(), nullable=False),
        sa.Column("unique_serial", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=190), nullable=False),
        sa.Column("all_events", sa.Boolean(), nullable=False),
        sa.Column("security_profile", sa.String(length=64), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("initialization_token", sa.String(length=64), nullable=False),
        sa.Column("initialized", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column("api_token_hash", sa.String(length=64), nullable=True),
        sa.Column("revoked", sa.Boolean(), nullable=False),
        sa.Column("hardware_brand", sa.String(length=190), nullable=True),
        sa.Column("hardware_model", sa.String(length=190), nullable=True),
        sa.Column("os_name", sa.String(length=190), nullable=True),
        sa.Column("os_version", sa.String(length=190), nullable=True),
        sa.Column("software_brand", sa.String(length=190), nullable=True),
        sa.Column("software_version", sa.String(length=190), nullable=True),
        sa.Column("rsa_pubkey", sa.Text(), nullable=True),
        sa.Column("info", JSON, nullable=True),
        sa.Column("gate_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["gate_id"], ["gates.id"], name=op.f("fk_devices_gate_id_gates"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_devices_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_devices")),
        sa.UniqueConstraint("api_token_hash", name=op.f("uq_devices_api_token_hash")),
        sa.UniqueConstraint("initialization_token", name=op.f("uq_devices_initialization_token")),
        sa.UniqueConstraint(
            "organizer_id", "device_id", name=op.f("uq_devices_organizer_id_device_id")
        ),
        sa.UniqueConstraint("unique_serial", name=op.f("uq_devices_unique_serial")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("devices", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_devices_gate_id"), ["gate_id"], unique=False)

    op.create_table(
        "device_limit_events",
        sa.Column("device_id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["device_id"],
            ["devices.id"],
            name=op.f("fk_device_limit_events_device_id_devices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_device_limit_events_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("device_id", "event_id", name=op.f("pk_device_limit_events")),
    )
    with op.batch_alter_table("device_limit_events", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_device_limit_events_event_id"), ["event_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("device_limit_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_device_limit_events_event_id"))
    op.drop_table("device_limit_events")
    with op.batch_alter_table("devices", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_devices_gate_id"))
    op.drop_table("devices")
    with op.batch_alter_table("gates", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_gates_organizer_id"))
    op.drop_table("gates")
