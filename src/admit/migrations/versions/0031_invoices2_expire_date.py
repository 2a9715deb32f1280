"""An invoice's copy of its order's expiry date (``invoices.expire_date``), kept when the event's
``invoice_include_expire_date`` was on and the order pending as the invoice was issued, so the
PDF shows it however often it is drawn again.

Revision ID: 0031_invoices2
Revises: 0030_control
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0031_invoices2"
down_revision: str | None = "0030_control"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("invoices") as batch:
        batch.add_column(sa.Column("expire_date", sa.Date(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("invoices") as batch:
        batch.drop_column("expire_date")
