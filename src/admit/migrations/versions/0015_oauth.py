"""OAuth 2 applications, grants, codes and tokens; TOTP second factors and failed logins.

Revision ID: 0015
Revises: 0014
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import admit.db

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "login_failures",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(length=190), nullable=False),
        sa.Column("ip", sa.String(length=64), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_failures")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("login_failures", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_login_failures_created"), ["created"], unique=False)
        batch_op.create_index(batch_op.f("ix_login_failures_email"), ["email"], unique=False)
        batch_op.create_index(batch_op.f("ix_login_failures_ip"), ["ip"], unique=False)

    op.create_table(
        "oauth_applications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=True),
        sa.Column("name", sa.String(length=190), nullable=False),
        sa.Column(
            "redirect_uris",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("owner_id", sa.Integer(), nullable=True),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_oauth_applications_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_applications")),
        sa.UniqueConstraint("client_id", name=op.f("uq_oauth_applications_client_id")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("oauth_applications", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_oauth_applications_owner_id"), ["owner_id"], unique=False
        )

    op.create_table(
        "user_totp",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("secret", sa.String(length=64), nullable=False),
        sa.Column("confirmed", sa.Boolean(), nullable=False),
        sa.Column("last_step", sa.Integer(), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_user_totp_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_user_totp")),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "oauth_grants",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("application_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=100), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["application_id"],
            ["oauth_applications.id"],
            name=op.f("fk_oauth_grants_application_id_oauth_applications"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_oauth_grants_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_grants")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("oauth_grants", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_oauth_grants_application_id"), ["application_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_oauth_grants_user_id"), ["user_id"], unique=False)

    op.create_table(
        "oauth_codes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("grant_id", sa.Integer(), nullable=False),
        sa.Column("redirect_uri", sa.Text(), nullable=False),
        sa.Column("code_challenge", sa.String(length=128), nullable=True),
        sa.Column("code_challenge_method", sa.String(length=10), nullable=True),
        sa.Column("expires", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("used", admit.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["grant_id"],
            ["oauth_grants.id"],
            name=op.f("fk_oauth_codes_grant_id_oauth_grants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_codes")),
        sa.UniqueConstraint("code_hash", name=op.f("uq_oauth_codes_code_hash")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("oauth_codes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_oauth_codes_grant_id"), ["grant_id"], unique=False)

    op.create_table(
        "oauth_grant_organizers",
        sa.Column("grant_id", sa.Integer(), nullable=False),
        sa.Column("organizer_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["grant_id"],
            ["oauth_grants.id"],
            name=op.f("fk_oauth_grant_organizers_grant_id_oauth_grants"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organizer_id"],
            ["organizers.id"],
            name=op.f("fk_oauth_grant_organizers_organizer_id_organizers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("grant_id", "organizer_id", name=op.f("pk_oauth_grant_organizers")),
    )
    with op.batch_alter_table("oauth_grant_organizers", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_oauth_grant_organizers_organizer_id"), ["organizer_id"], unique=False
        )

    op.create_table(
        "oauth_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("grant_id", sa.Integer(), nullable=False),
        sa.Column("access_hash", sa.String(length=64), nullable=False),
        sa.Column("refresh_hash", sa.String(length=64), nullable=True),
        sa.Column("scope", sa.String(length=100), nullable=False),
        sa.Column("expires", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("access_revoked", sa.Boolean(), nullable=False),
        sa.Column("refresh_revoked", sa.Boolean(), nullable=False),
        sa.Column("created", admit.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["grant_id"],
            ["oauth_grants.id"],
            name=op.f("fk_oauth_tokens_grant_id_oauth_grants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_tokens")),
        sa.UniqueConstraint("access_hash", name=op.f("uq_oauth_tokens_access_hash")),
        sa.UniqueConstraint("refresh_hash", name=op.f("uq_oauth_tokens_refresh_hash")),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("oauth_tokens", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_oauth_tokens_grant_id"), ["grant_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("oauth_tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_oauth_tokens_grant_id"))

    op.drop_table("oauth_tokens")
    with op.batch_alter_table("oauth_grant_organizers", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_oauth_grant_organizers_organizer_id"))

    op.drop_table("oauth_grant_organizers")
    with op.batch_alter_table("oauth_codes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_oauth_codes_grant_id"))

    op.drop_table("oauth_codes")
    with op.batch_alter_table("oauth_grants", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_oauth_grants_user_id"))
        batch_op.drop_index(batch_op.f("ix_oauth_grants_application_id"))

    op.drop_table("oauth_grants")
    op.drop_table("user_totp")
    with op.batch_alter_table("oauth_applications", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_oauth_applications_owner_id"))

    op.drop_table("oauth_applications")
    with op.batch_alter_table("login_failures", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_login_failures_ip"))
        batch_op.drop_index(batch_op.f("ix_login_failures_email"))
        batch_op.drop_index(batch_op.f("ix_login_failures_created"))

    op.drop_table("login_failures")
