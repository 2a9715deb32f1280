"""Order fees: ``tax_code``, the code of the tax applied to the fee (as positions have it):
a fee's tax follows its rule as it applies to the invoice address, reverse charge included.

Revision ID: 0022
Revises: 0021
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("order_fees", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tax_code", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("order_fees", schema=None) as batch_op:
        batch_op.drop_column("tax_code")
