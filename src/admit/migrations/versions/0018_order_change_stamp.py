"""Order change stamp: triggers that move ``orders.last_modified`` with every change of an
order, its positions, fees, payments, refunds, answers, check-ins and print logs.

The DDL is written by ``admit.models.order_stamp.ORDER_STAMP`` (``models/stamp_triggers.py``), the
one definition that ``metadata.create_all`` uses as well.

Revision ID: 0018
Revises: 0017
"""

from collections.abc import Sequence

from alembic import op

from admit.models.order_stamp import ORDER_STAMP

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    ORDER_STAMP.install(op.get_bind())


def downgrade() -> None:
    ORDER_STAMP.uninstall(op.get_bind())
