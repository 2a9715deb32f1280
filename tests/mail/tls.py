"""A real submission server for the mail tests: aiosmtpd with STARTTLS (a certificate from a
test CA made with ``cryptography``) and AUTH required, as a mail provider's port 587 is.

Admit trusts the test CA the way an operator trusts a private one: ``SSL_CERT_FILE`` names the
CA bundle (OpenSSL's own variable, read by the default TLS context aiosmtplib builds).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.live import free_port
from tests.mail.conftest import Mailbox

USER, PASSWORD = "admit@example.org", "s3cret pass"


@dataclass
class ServerCA:
    ca_file: Path
    cert_file: Path
    key_file: Path


def make_ca(directory: Path) -> ServerCA:
    """A CA and a server certificate for 127.0.0.1 it signed, as PEM files."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Admit test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    found = ServerCA(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    found.ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    found.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    found.key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return found


class SubmissionBox(Mailbox):
    """The mailbox, recording how each accepted message came: over TLS, and as whom."""

    def __init__(self) -> None:
        super().__init__()
        self.sessions: list[tuple[bool, str | None]] = []  # (TLS, login) per message
        self.logins: list[tuple[str, bool]] = []  # (user, accepted) per AUTH attempt

    async def handle_DATA(self, server, session, envelope):
        answer = await super().handle_DATA(server, session, envelope)
        if answer.startswith("250"):
            login = session.auth_data.login.decode() if session.authenticated else None
            self.sessions.append((session.ssl is not None, login))
        return answer

    def authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        user, password = auth_data.login.decode(), auth_data.password.decode()
        accepted = (user, password) == (USER, PASSWORD)
        self.logins.append((user, accepted))
        return AuthResult(success=accepted, handled=False, auth_data=auth_data)


@pytest.fixture
def server_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ServerCA:
    """The test CA, trusted by this process's default TLS contexts (``SSL_CERT_FILE``)."""
    found = make_ca(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(found.ca_file))
    return found


@pytest.fixture
def submission(server_ca: ServerCA) -> Iterator[SubmissionBox]:
    """STARTTLS required before anything else, AUTH (PLAIN or LOGIN) required before MAIL."""
    box = SubmissionBox()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(server_ca.cert_file, server_ca.key_file)
    port = free_port()
    controller = Controller(
        box,
        hostname="127.0.0.1",
        port=port,
        tls_context=context,
        require_starttls=True,
        auth_required=True,
        authenticator=box.authenticate,
    )
    controller.start()
    box.url = f"smtp://127.0.0.1:{port}?timeout=5"
    try:
        yield box
    finally:
        controller.stop()
