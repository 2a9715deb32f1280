"""https deliveries: the connection goes to the checked (pinned) address while TLS speaks to
the URL's host name (SNI) and checks the certificate against it, with a CA of the test's own
trusted through ``ADMIT_WEBHOOK_CA_FILE``. Real TLS servers on 127.0.0.1, certificates made
here with ``cryptography``."""

from __future__ import annotations

import asyncio
import datetime as dt
import ssl
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from admit.webhooks import http
from tests.factories import World
from tests.webhooks.conftest import Receiver, calls, create_hook, notify, pump

WAITING = "service.event.orders.waitinglist"


@dataclass
class PKI:
    """A certificate authority of the test's own, able to issue server certificates."""

    root: Path
    ca_file: Path
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    def issue(self, name: str) -> tuple[Path, Path]:
        """A certificate for the DNS name ``name`` (and its key), signed by the CA."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        cert_file, key_file = self.root / f"{name}.pem", self.root / f"{name}.key"
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        return cert_file, key_file


@pytest.fixture
def pki(tmp_path: Path) -> PKI:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Admit test CA")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return PKI(tmp_path, ca_file, key, cert)


@asynccontextmanager
async def tls_receiver(pki: PKI, name: str) -> AsyncIterator[tuple[Receiver, list[str], int]]:
    """A receiver on 127.0.0.1 presenting a certificate for ``name``; the SNI names it got."""
    cert_file, key_file = pki.issue(name)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    names: list[str] = []
    sni: Callable[..., None] = lambda _sock, server_name, _ctx: names.append(server_name)  # noqa: E731
    context.sni_callback = sni
    box = Receiver()
    server = await asyncio.start_server(box.handle, "127.0.0.1", 0, ssl=context)
    try:
        yield box, names, server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


async def _post(url: str, host: str, port: int, ca_file: Path | None) -> http.Answer:
    # The run's checked addresses: the name (which no resolver here knows) pinned to 127.0.0.1.
    pinned = {(host, port): ("127.0.0.1", time.monotonic() + 30)}
    async with http.client(5, str(ca_file) if ca_file else None) as client:
        return await http.post(
            client, url, b"{}", {}, timeout=5, allow_private=False, addresses=pinned
        )


async def test_https_goes_to_the_pinned_address_with_sni_and_the_certificate_checked(pki: PKI):
    async with tls_receiver(pki, "hooks.example") as (box, names, port):
        url = f"https://hooks.example:{port}/hook"
        answer = await _post(url, "hooks.example", port, pki.ca_file)
        assert answer.ok and answer.error is None, answer
        # The name no resolver knows was reached at the pinned address, under its own name.
        assert names == ["hooks.example"]
        [request] = box.requests
        assert request.headers["host"] == f"hooks.example:{port}"

        # Without the CA trusted, the same server is refused.
        untrusted = await _post(url, "hooks.example", port, None)
        assert untrusted.status is None and "CERTIFICATE_VERIFY_FAILED" in untrusted.error
        assert len(box.requests) == 1

    # A certificate for another name is refused, with a message that says so.
    async with tls_receiver(pki, "other.example") as (box, names, port):
        answer = await _post(
            f"https://hooks.example:{port}/hook", "hooks.example", port, pki.ca_file
        )
        assert answer.status is None and box.requests == []
        assert names == ["hooks.example"]
        assert "certificate verify failed" in answer.error.lower()
        assert "hooks.example" in answer.error and "127.0.0.1" not in answer.error


async def test_https_deliveries_through_the_job_trust_the_configured_ca(
    client, background, fast_retries, pki: PKI, world: World
):
    app = client._transport.app
    fast_retries.webhook_ca_file = str(pki.ca_file)
    try:
        async with (
            tls_receiver(pki, "localhost") as (good, good_names, good_port),
            tls_receiver(pki, "other.example") as (bad, bad_names, bad_port),
        ):
            ok = await create_hook(client, world, f"https://localhost:{good_port}/hook")
            wrong = await create_hook(client, world, f"https://localhost:{bad_port}/hook")
            await notify(app, world.org.id, world.event.id, f"{WAITING}.added")

            async def attempted() -> bool:
                return all(c.attempts for c in await calls(app))

            await pump(app, attempted)
    finally:
        fast_retries.webhook_ca_file = None
    delivered, refused = await calls(app)
    assert delivered.webhook_id == ok["id"] and refused.webhook_id == wrong["id"]
    assert (delivered.status, delivered.response_status) == ("delivered", 200)
    assert delivered.attempts == 1, delivered.error
    assert good_names == ["localhost"] and len(good.requests) == 1
    assert refused.status == "pending" and refused.response_status is None
    assert refused.attempts >= 1 and bad_names == ["localhost"] * refused.attempts
    assert bad.requests == []
    assert "certificate verify failed" in refused.error.lower(), refused.error
    assert "127.0.0.1" not in refused.error
