"""Gift card acceptance needs the accepting organizer's consent: ``accepted`` (false until the
acceptor accepts) and ``acceptor_slug`` (the issuer's offer names the acceptor by slug, so
making one reveals nothing about which slugs exist; ``acceptor_id`` is set on acceptance).

Acceptances made before this (granted by the issuer alone) wait for the acceptor's consent.

Revision ID: 0023
Revises: 0022
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("gift_card_acceptances", schema=None) as batch_op:
        batch_op.add_column(sa.Column("acceptor_slug", sa.String(length=50), nullable=True))
        batch_op.add_column(
            sa.Column("accepted", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.execute(
        "UPDATE gift_card_acceptances SET acceptor_slug = "
        "(SELECT slug FROM organizers WHERE organizers.id = gift_card_acceptances.acceptor_id)"
    )
    # Not accepted by anyone yet: the offer stands, the acceptor is known by its slug.
    op.execute("UPDATE gift_card_acceptances SET acceptor_id = NULL")
    with op.batch_alter_table("gift_card_acceptances", schema=None) as batch_op:
        batch_op.alter_column("accepted", server_default=None)
        batch_op.alter_column("acceptor_slug", existing_type=sa.String(length=50), nullable=False)
        batch_op.alter_column("acceptor_id", existing_type=sa.Integer(), nullable=True)
        batch_op.create_unique_constraint(
            batch_op.f("uq_gift_card_acceptances_issuer_id_acceptor_slug"),
            ["issuer_id", "acceptor_slug"],
        )
        batch_op.create_index(
            batch_op.f("ix_gift_card_acceptances_acceptor_slug"), ["acceptor_slug"], unique=False
        )


def downgrade() -> None:
    op.execute("DELETE FROM gift_card_acceptances WHERE acceptor_id IS NULL")
    with op.batch_alter_table("gift_card_acceptances", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_gift_card_acceptances_acceptor_slug"))
        batch_op.drop_constraint(
            batch_op.f("uq_gift_card_acceptances_issuer_id_acceptor_slug"), type_="unique"
        )
        batch_op.alter_column("acceptor_id", existing_type=sa.Integer(), nullable=False)
        batch_op.drop_column("accepted")
        batch_op.drop_column("acceptor_slug")
