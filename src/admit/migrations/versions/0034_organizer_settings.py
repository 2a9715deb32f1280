"""The organizer's settings (``organizers.settings``: customer accounts in the shop, the
organizer's contact address and imprint), read and written through ``O/settings/``.

Revision ID: 0034_organizer_settings
Revises: 0033_audit
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0034_organizer_settings"
down_revision: str | None = "0033_audit"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("organizers") as batch:
        batch.add_column(
            sa.Column(
                "settings",
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
                nullable=False,
                server_default="{}",
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("organizers") as batch:
        batch.drop_column("settings")
