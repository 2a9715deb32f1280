"""Idempotency keys: ``recipe``, an answer kept as the facts it is rendered from.

A keyed first entry at the doors writes its key in the scan's own statement, before Python
has rendered the answer; the row holds the lookup row and the scan instead, and a replay
renders the answer from them (``admit.checkin.keyed``). ``json``, so the text comes back as
it was stored; compressed with lz4 where the server has it
(``admit.models.idempotency.compress_recipes``, the one definition ``metadata.create_all``
uses as well).

Revision ID: 0021
Revises: 0020
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from admit.models.idempotency import compress_recipes

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("recipe", sa.JSON(), nullable=True))
    compress_recipes(op.get_bind())


def downgrade() -> None:
    with op.batch_alter_table("idempotency_keys", schema=None) as batch_op:
        batch_op.drop_column("recipe")
