"""Settings from the environment (prefix ``ADMIT_``); nothing needs a config file to start."""

from __future__ import annotations

import secrets
from functools import cached_property
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ADMIT_", extra="ignore")

    data_dir: Path = Field(default=Path("./var"))
    database_url: str | None = None
    redis_url: str | None = None
    base_url: str | None = None
    secret_key: str | None = None
    max_body_bytes: int = 5 * 1024 * 1024
    db_pool_size: int = 10
    db_pool_timeout: float = Field(default=10.0, gt=0, le=600)  # wait for a connection, then 503
    sql_echo: bool = False
    # FastAPI's built-in OpenTelemetry hooks; off by default, they cost ~5% per request.
    telemetry: bool = False
    # How long a worker may answer a fast-lane request (cart creation, redeem) from a
    # credential it resolved before; 0 looks every one up. A revoked token or a changed team
    # takes effect at once in the worker that made the change, in the others within this time.
    credential_cache_seconds: float = Field(default=1.0, ge=0, le=60)
    # List pages a worker keeps and answers again while what they show is unchanged (proved
    # by one statement per request, see kit/stamps/pagecache.py); 0 keeps none.
    page_cache_mb: float = Field(default=16.0, ge=0, le=4096)
    # How long a worker answers the shop's front page it rendered for a visitor without a
    # cart or voucher to the next such visitors (shop/front_pages.py: what the page shows is
    # at most twice this old); 0 renders every one.
    shop_page_seconds: float = Field(default=1.0, ge=0, le=60)
    # Logs every garbage collection that held a worker's event loop at least this long
    # (its generation and duration), to tell collector pauses from other stalls; 0: off.
    log_gc_pauses_ms: float = Field(default=0.0, ge=0, le=60_000)
    idempotency_hours: float = Field(default=24.0, gt=0, le=24 * 30)  # answers to keys kept
    # How long after a scan the scanning device may annul it.
    checkin_annul_window_minutes: int = Field(default=15, ge=0, le=24 * 60)

    # Accounts and pages. Failed logins (password or second factor) allowed per account and
    # per client address within the window; more are refused with 429 until old ones age out.
    login_max_failures: int = Field(default=5, ge=1, le=1000)
    login_max_failures_per_ip: int = Field(default=30, ge=1, le=100_000)
    login_throttle_minutes: float = Field(default=15.0, gt=0, le=24 * 60)
    # How long a login (a signed session cookie) lasts; how long a team invitation is good.
    session_hours: float = Field(default=24.0 * 14, gt=0, le=24 * 365)
    invite_days: float = Field(default=14.0, gt=0, le=365)

    # Background work. Without a broker URL jobs run inside the server process (embedded);
    # with one, ``admit worker`` processes run them and ``admit scheduler`` the periodic work.
    # ``redis://`` (from ``broker_url`` or else ``redis_url``) or ``amqp://`` (RabbitMQ).
    broker_url: str | None = None
    # The broker's queue (Redis stream / RabbitMQ queue): installations sharing a broker
    # need one each.
    job_queue: str = Field(default="admit-jobs", min_length=1, max_length=100)
    # How long a claimed job belongs to its worker without a heartbeat (heartbeats come every
    # third of it); a job whose worker died is run again (or failed) once this has passed.
    job_lease_seconds: float = Field(default=30.0, gt=0, le=3600)
    # How often the scheduler reaps expired leases and re-sends waiting jobs nobody took.
    job_sweep_seconds: float = Field(default=5.0, gt=0, le=3600)
    # A waiting job handed to the broker this long ago and still not started is sent again.
    job_redeliver_seconds: float = Field(default=60.0, gt=0, le=24 * 3600)
    # How long job rows and their result files are kept after the job ended.
    job_result_hours: float = Field(default=24.0, gt=0, le=24 * 365)
    # Jobs one embedded server process or one ``admit worker`` runs at once (by default).
    job_concurrency: int = Field(default=4, ge=1, le=1000)
    # Where job results and uploads live: a directory under the data dir by default, or
    # ``s3://bucket/prefix?endpoint_url=…&region=…`` (credentials from the URL's user and
    # password or the usual AWS_* variables).
    storage_url: str | None = None
    # Outgoing mail: ``smtp://user:password@host:587?starttls=true`` or ``smtps://host:465``;
    # unset keeps mails in the outbox (``admit mail list``).
    smtp_url: str | None = None
    mail_from: str = "admit@localhost"
    # Seconds before the first retry of a mail the server refused temporarily (doubles after).
    mail_retry_seconds: float = Field(default=60.0, gt=0, le=24 * 3600)

    # Webhooks. Targets resolving to loopback, private or link-local addresses are refused
    # unless allowed here (a receiver on the same network). A delivery waits this long for an
    # answer; failures are retried with exponential backoff from the base (with jitter) until
    # the notification is this many hours old. Deliveries to one host run at most this many
    # at once per process, so a slow receiver cannot take every job slot. ``webhook_ca_file``:
    # a PEM file of certificate authorities trusted for https targets besides the usual ones
    # (a receiver with a certificate of an internal CA).
    webhook_allow_private: bool = False
    webhook_timeout_seconds: float = Field(default=30.0, gt=0, le=300)
    webhook_retry_base_seconds: float = Field(default=60.0, gt=0, le=24 * 3600)
    webhook_max_age_hours: float = Field(default=72.0, gt=0, le=24 * 30)
    webhook_host_concurrency: int = Field(default=2, ge=1, le=100)
    webhook_ca_file: str | None = None
    log_format: str = Field(default="text", pattern="^(text|json)$")
    log_level: str = Field(default="WARNING", pattern="(?i)^(debug|info|warning|error)$")
    access_log: bool = True
    trusted_proxies: str = "127.0.0.1,::1"
    # Host names (any port) a request may carry for links to be built from it when base_url
    # is unset; None: the loopback names. The base URL's host is always allowed. kit/http/hosts.py
    allowed_hosts: str | None = None
    hsts_seconds: int = Field(default=31_536_000, ge=0, le=10 * 31_536_000)
    rate_limit: str | None = None
    rate_limit_device: str | None = None
    # The public shop API (no credentials): requests per client address, counted apart from
    # ADMIT_RATE_LIMIT so a shop is protected even when the general limit is off. "" turns it off.
    shop_rate_limit: str | None = "600/minute"
    # The namespace of the rate-limit counters in Redis: processes with the same one share
    # budgets. Unset: derived from the database (host, port, name), so one installation's
    # processes share and two installations on one Redis do not.
    rate_limit_prefix: str | None = Field(default=None, min_length=1, max_length=100)
    # Bytes of unused uploads (not yet taken by a file field, kept 24 h) one credential may
    # hold; an upload past it is refused.
    upload_quota_bytes: int = Field(default=100 * 1024 * 1024, ge=0)

    @cached_property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        self.data_dir.mkdir(parents=True, exist_ok=True)
        return f"sqlite+aiosqlite:///{(self.data_dir / 'admit.sqlite3').resolve()}"

    @cached_property
    def resolved_secret_key(self) -> str:
        """A key from the environment, else one generated once and kept in the data dir."""
        if self.secret_key:
            return self.secret_key
        self.data_dir.mkdir(parents=True, exist_ok=True)
        path = self.data_dir / "secret_key"
        if not path.exists():
            path.write_text(secrets.token_urlsafe(48))
            path.chmod(0o600)
        return path.read_text().strip()

    @property
    def resolved_broker_url(self) -> str | None:
        """The broker for ``admit worker`` processes; None is the embedded mode."""
        return self.broker_url or self.redis_url

    @property
    def files_dir(self) -> Path:
        path = self.data_dir / "files"
        path.mkdir(parents=True, exist_ok=True)
        return path


def get_settings() -> Settings:
    return Settings()
