"""Mail through a submission server that requires STARTTLS and a login, as a provider's port
587 does: delivered over TLS as the configured user; a wrong password or an untrusted
certificate is a refused attempt with the reason in the outbox, never a crash."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest

from tests.mail import tls
from tests.mail.conftest import mail_row, queue, settle
from tests.mail.tls import PASSWORD, USER, SubmissionBox

server_ca, submission = tls.server_ca, tls.submission  # the fixtures


def _url(box: SubmissionBox, user: str, password: str, extra: str = "") -> str:
    host = box.url.removeprefix("smtp://")
    return f"smtp://{quote(user, safe='')}:{quote(password, safe='')}@{host}&starttls=true{extra}"


@pytest.fixture
def smtp_settings(clean_app) -> Iterator[object]:
    """The app's settings; ``smtp_url`` and the retry delay restored afterwards."""
    settings = clean_app.state.settings
    saved = settings.smtp_url, settings.mail_retry_seconds
    settings.mail_retry_seconds = 0.02
    try:
        yield settings
    finally:
        settings.smtp_url, settings.mail_retry_seconds = saved


async def test_delivered_with_starttls_and_login(
    clean_app, background, smtp_settings, submission: SubmissionBox
):
    smtp_settings.smtp_url = _url(submission, USER, PASSWORD)
    mail_id, job_id = await queue(clean_app, to=["buyer@example.org"], subject="Over TLS")
    job = await settle(clean_app, job_id)
    assert (job.status, job.message) == ("finished", "Sent to 1 recipient(s)."), job.message
    mail = await mail_row(clean_app, mail_id)
    assert (mail.status, mail.error) == ("sent", None)
    assert submission.sessions == [(True, USER)]  # over TLS, logged in as the user
    assert submission.logins == [(USER, True)]
    [message] = submission.messages
    assert message["Subject"] == "Over TLS" and message["To"] == "buyer@example.org"


async def test_a_wrong_password_is_a_refused_attempt_with_the_answer_in_the_outbox(
    clean_app, background, smtp_settings, submission: SubmissionBox
):
    smtp_settings.smtp_url = _url(submission, USER, "not the password")
    mail_id, _ = await queue(clean_app, to=["buyer@example.org"])
    await background.engine.broker.wait_all()
    mail = await mail_row(clean_app, mail_id)
    # A login refused is about the configuration, not this mail: kept for another attempt.
    assert (mail.status, mail.attempts) == ("queued", 1), mail.error
    assert mail.error.startswith("535 "), mail.error
    assert "Authentication" in mail.error or "authentication" in mail.error, mail.error
    assert submission.logins and set(submission.logins) == {(USER, False)}
    assert submission.envelopes == []

    # Once the operator fixes the password, the same mail goes out.
    smtp_settings.smtp_url = _url(submission, USER, PASSWORD)
    job = await settle(clean_app, mail.job_id)
    assert job.status == "finished", job.message
    assert (await mail_row(clean_app, mail_id)).status == "sent"
    assert submission.sessions == [(True, USER)]


async def test_an_untrusted_certificate_is_refused_and_recorded(
    clean_app,
    background,
    smtp_settings,
    submission: SubmissionBox,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path,
):
    # Trust nothing but an unrelated CA: the server's certificate cannot be verified.
    from tests.mail.tls import make_ca

    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv("SSL_CERT_FILE", str(make_ca(other).ca_file))
    smtp_settings.smtp_url = _url(submission, USER, PASSWORD)
    mail_id, _ = await queue(clean_app, to=["buyer@example.org"])
    await background.engine.broker.wait_all()
    mail = await mail_row(clean_app, mail_id)
    assert (mail.status, mail.attempts) == ("queued", 1)
    assert "certificate verify failed" in mail.error, mail.error
    assert submission.logins == [] and submission.envelopes == []  # no password sent


async def test_without_starttls_the_server_refuses_and_no_password_goes_out(
    clean_app, background, smtp_settings, submission: SubmissionBox
):
    smtp_settings.smtp_url = _url(submission, USER, PASSWORD).replace(
        "starttls=true", "starttls=false"
    )
    mail_id, _ = await queue(clean_app, to=["buyer@example.org"])
    await background.engine.broker.wait_all()
    mail = await mail_row(clean_app, mail_id)
    assert (mail.status, mail.attempts) == ("queued", 1)
    assert "STARTTLS" in mail.error, mail.error
    assert submission.logins == [] and submission.envelopes == []
