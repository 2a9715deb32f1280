"""Password reset by mail: a signed, expiring link that works once.

The link carries the user's id and a fingerprint of the current password hash, signed with the
installation's secret key; setting a new password changes the fingerprint, so the link is spent
(and so is any older one). Nothing is stored.
"""

from __future__ import annotations

from itsdangerous import BadSignature, URLSafeTimedSerializer
from jinja2 import Environment, PackageLoader, StrictUndefined
from sqlalchemy.ext.asyncio import AsyncSession

from admit.mail.outbox import queue_mail
from admit.models import User
from admit.users.accounts import password_fingerprint

RESET_HOURS = 2
_SALT = "admit.password-reset"

_loader = PackageLoader("admit.users", "templates")
_text = Environment(loader=_loader, autoescape=False, undefined=StrictUndefined)
_html = Environment(loader=_loader, autoescape=True, undefined=StrictUndefined)


def _serializer(secret_key: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(secret_key, salt=_SALT)


def make_token(secret_key: str, user: User) -> str:
    return _serializer(secret_key).dumps({"u": user.id, "p": password_fingerprint(user)})


async def user_for_token(session: AsyncSession, secret_key: str, token: str) -> User | None:
    """The user the link was made for, while it is fresh and the password unchanged."""
    try:
        data = _serializer(secret_key).loads(token, max_age=RESET_HOURS * 3600)
    except (BadSignature, UnicodeError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("u"), int):
        return None
    user = await session.get(User, data["u"])
    if user is None or not user.is_active or data.get("p") != password_fingerprint(user):
        return None
    return user


async def send_reset_mail(
    session: AsyncSession, secret_key: str, user: User, base_url: str
) -> None:
    link = f"{base_url}/password-reset/{make_token(secret_key, user)}/"
    context = {"link": link, "hours": RESET_HOURS, "email": user.email}
    subject = "Reset your Admit password"
    await queue_mail(
        session,
        to=[user.email],
        subject=subject,
        body=_text.get_template("password_reset.txt").render(context),
        html=_html.get_template("password_reset.html").render(context, subject=subject),
    )
