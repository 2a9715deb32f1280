"""The SMTP server fixtures of the mail tests, for the end-to-end delivery test."""

from tests.mail.conftest import mailbox, smtp  # noqa: F401
