"""The SMTP URL, templates and message ids, without a server."""

from __future__ import annotations

import pytest

from admit.mail.outbox import message_id_domain
from admit.mail.render import render_mail
from admit.mail.smtp import parse_smtp_url


def test_smtp_urls():
    plain = parse_smtp_url("smtp://mail.example.org")
    assert (plain.hostname, plain.port, plain.use_tls, plain.start_tls) == (
        "mail.example.org",
        25,
        False,
        None,
    )
    assert (plain.username, plain.password, plain.timeout) == (None, None, 30.0)
    submission = parse_smtp_url("smtp://us%40er:p%3Ass@mail.example.org?starttls=true&timeout=5")
    assert (submission.port, submission.start_tls, submission.timeout) == (587, True, 5.0)
    assert (submission.username, submission.password) == ("us@er", "p:ss")
    assert parse_smtp_url("smtp://h:2525?starttls=false").start_tls is False
    tls = parse_smtp_url("smtps://h?verify=false")
    assert (tls.port, tls.use_tls, tls.start_tls, tls.validate_certs) == (465, True, False, False)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://h", "must start with smtp"),
        ("smtp://", "names no host"),
        ("smtp://h:99999", "invalid port"),
        ("smtp://h?tls=1", "unknown options: tls"),
        ("smtp://h?starttls=maybe", "starttls must be true or false"),
        ("smtps://h?starttls=true", "already speaks TLS"),
        ("smtp://h?timeout=soon", "timeout must be a number"),
        ("smtp://user:secret@h?timeout=0", "between 0 and 600"),
    ],
)
def test_bad_smtp_urls_say_why_without_the_password(url, problem):
    with pytest.raises(ValueError, match=problem) as caught:
        parse_smtp_url(url)
    assert "secret" not in str(caught.value)


def test_templates_escape_html_only():
    subject, text, html = render_mail(
        "customer_created", organizer="A & B <i>GmbH</i>\nBcc: x@y", identifier="C-1"
    )
    assert subject == "Your customer account at A & B <i>GmbH</i> Bcc: x@y"
    assert "at A & B <i>GmbH</i>\nBcc: x@y." in text
    assert "A &amp; B &lt;i&gt;GmbH&lt;/i&gt;" in html and "<i>" not in html
    assert "<title>Your customer account at A &amp; B" in html


def test_a_missing_value_is_an_error_not_a_gap():
    from jinja2 import UndefinedError

    with pytest.raises(UndefinedError):
        render_mail("order_placed", code="ABC12")


def test_message_ids_use_the_sender_domain():
    assert message_id_domain() == "localhost"
