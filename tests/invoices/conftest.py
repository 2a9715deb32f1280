"""The mail tests' SMTP server (aiosmtpd) for the buyer-mail tests here."""

from tests.mail.conftest import mailbox, smtp  # noqa: F401
