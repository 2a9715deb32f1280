"""The file store on S3-compatible object storage (AWS S3, MinIO, Ceph, …).

Configured by one URL::

    s3://KEY:SECRET@bucket/optional/prefix?endpoint_url=http://127.0.0.1:9000&region=eu-central-1

``KEY:SECRET@`` is optional (percent-encode special characters); without it boto3 finds
credentials its usual way (environment, config files, instance roles). ``endpoint_url`` is
needed for anything but AWS itself; ``region`` and ``addressing_style`` (``path`` by default
with an endpoint, as most S3-compatible servers expect) are optional.

Atomicity comes from S3 itself: an object appears only once its upload completed, so a
writer spools to a local temporary file and uploads it when the block ends without error.
boto3 is synchronous, so every call runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator
from typing import Any, BinaryIO, cast
from urllib.parse import parse_qs, unquote, urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from admit.jobs.storage import CHUNK_SIZE, StoredFileMissing, check_key

_MISSING = {"404", "NoSuchKey", "NotFound"}
_SPOOL_BYTES = 4 * 1024 * 1024  # small files stay in memory, bigger ones go to disk
_OPTIONS = {"endpoint_url", "region", "addressing_style"}


def _is_missing(error: ClientError) -> bool:
    return str(error.response.get("Error", {}).get("Code")) in _MISSING


class S3FileStore:
    """Files as objects under ``prefix`` in one bucket."""

    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        self.client = client  # boto3 clients are thread-safe: one per store
        self.bucket = bucket
        self.prefix = prefix.strip("/")

    @classmethod
    def from_url(cls, url: str) -> S3FileStore:
        """The store an ``s3://`` URL names (format in the module docstring), so one setting
        configures bucket, prefix, endpoint and credentials."""
        parts = urlsplit(url)
        if parts.scheme != "s3":
            raise ValueError(f"not an s3:// URL: {url!r}")
        bucket = parts.netloc.rpartition("@")[2]  # not .hostname: that lowercases
        if not bucket:
            raise ValueError("the s3:// URL names no bucket")
        query = {name: values[-1] for name, values in parse_qs(parts.query).items()}
        if unknown := set(query) - _OPTIONS:
            raise ValueError(f"unknown s3:// URL options: {', '.join(sorted(unknown))}")
        credentials: dict[str, str] = {}
        if parts.username is not None:
            if parts.password is None:
                raise ValueError("the s3:// URL has a key but no secret (KEY:SECRET@bucket)")
            credentials = {
                "aws_access_key_id": unquote(parts.username),
                "aws_secret_access_key": unquote(parts.password),
            }
        endpoint = query.get("endpoint_url")
        style = query.get("addressing_style", "path" if endpoint else "auto")
        client = boto3.session.Session().client(
            "s3",
            endpoint_url=endpoint,
            region_name=query.get("region"),
            config=Config(s3={"addressing_style": style}),
            **credentials,
        )
        return cls(client, bucket, unquote(parts.path))

    def _key(self, key: str) -> str:
        check_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    @contextlib.asynccontextmanager
    async def writer(self, key: str) -> AsyncIterator[BinaryIO]:
        """A local spool file, uploaded whole on success: S3 then shows the object at once."""
        name = self._key(key)
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as spool:
            yield cast(BinaryIO, spool)
            spool.seek(0)
            await asyncio.to_thread(self.client.upload_fileobj, spool, self.bucket, name)

    async def open(self, key: str) -> AsyncIterator[bytes]:
        """Streams the object; a missing one raises StoredFileMissing before the first chunk."""
        name = self._key(key)
        try:
            response = await asyncio.to_thread(self.client.get_object, Bucket=self.bucket, Key=name)
        except ClientError as error:
            if _is_missing(error):
                raise StoredFileMissing(key) from None
            raise
        body = response["Body"]
        try:
            while chunk := await asyncio.to_thread(body.read, CHUNK_SIZE):
                yield chunk
        finally:
            body.close()

    async def size(self, key: str) -> int | None:
        """The object's size from its metadata, without downloading it; None when missing."""
        name = self._key(key)
        try:
            head = await asyncio.to_thread(self.client.head_object, Bucket=self.bucket, Key=name)
        except ClientError as error:
            if _is_missing(error):
                return None
            raise
        return int(head["ContentLength"])

    async def delete(self, key: str) -> None:
        """Removes the object; S3 reports success for a missing one too."""
        name = self._key(key)
        await asyncio.to_thread(self.client.delete_object, Bucket=self.bucket, Key=name)
