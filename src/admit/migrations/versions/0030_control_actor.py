"""Who did what a notification records (``notifications.actor_kind`` and ``actor_id``: a user,
an API token, a device, an OAuth application's user), so an object's history in the back
office names them. Older rows and changes made by the system itself have neither.

Revision ID: 0030_control
Revises: 0028_invoices
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0030_control"
down_revision: str | None = "0028_invoices"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("notifications") as batch:
        batch.add_column(sa.Column("actor_kind", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("actor_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("notifications") as batch:
        batch.drop_column("actor_id")
        batch.drop_column("actor_kind")
