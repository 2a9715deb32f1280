"""Webhook calls: ``claimed_by``, the delivery run that is sending the call.

A run marks a few calls before it sends them and clears the mark when it records their
answers; a mark left by a run that stopped (a process killed mid-send) tells the next run that
the call may already have reached the receiver, and that attempt is counted. Existing rows
get NULL (nobody is sending them).

Revision ID: 0026
Revises: 0025
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("webhook_calls", schema=None) as batch_op:
        batch_op.add_column(sa.Column("claimed_by", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("webhook_calls", schema=None) as batch_op:
        batch_op.drop_column("claimed_by")
