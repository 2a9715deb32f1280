"""The file store: every test runs against the local directory and against a real S3 server
(moto in server mode, started here), so both backends keep the same promises."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from admit.jobs.storage import (
    CHUNK_SIZE,
    FileStore,
    LocalFileStore,
    StoredFileMissing,
)
from admit.jobs.storage_s3 import S3FileStore
from admit.jobs.stores import open_store

BUCKET = "admit-test"


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """A local S3 server on a free port with the test bucket; stopped after the module."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError as error:
        pytest.skip(f"moto is not importable ({error}): no local S3 server for the S3 backend")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.session.Session().client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).create_bucket(Bucket=BUCKET)
    yield endpoint
    server.stop()


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> FileStore:
    if request.param == "local":
        return LocalFileStore(tmp_path / "files")
    endpoint = request.getfixturevalue("s3_endpoint")
    # A fresh prefix per test keeps the tests apart in the shared bucket.
    url = f"s3://testing:testing@{BUCKET}/run-{uuid.uuid4().hex}?endpoint_url={endpoint}"
    return open_store(url, tmp_path / "unused")


async def read_all(store: FileStore, key: str) -> bytes:
    return b"".join([chunk async for chunk in store.open(key)])


async def write(store: FileStore, key: str, data: bytes) -> None:
    async with store.writer(key) as handle:
        handle.write(data)


def leftovers(store: FileStore) -> list[str]:
    """Files in a local store's directory (partials included); nothing to see for S3."""
    if not isinstance(store, LocalFileStore):
        return []
    return sorted(str(p.relative_to(store.root)) for p in store.root.rglob("*") if p.is_file())


@pytest.mark.parametrize("length", [0, 4 * CHUNK_SIZE + 123, 9 * 1024 * 1024])
async def test_round_trip(store: FileStore, length: int) -> None:
    # 9 MB passes boto3's multipart threshold and the S3 writer's in-memory spool limit.
    data = os.urandom(length)
    async with store.writer("jobs/42/result.bin") as handle:
        for start in range(0, length, 100_000):  # written in pieces, like a job would
            handle.write(data[start : start + 100_000])
    assert await store.size("jobs/42/result.bin") == length
    chunks = [chunk async for chunk in store.open("jobs/42/result.bin")]
    assert b"".join(chunks) == data
    assert all(0 < len(chunk) <= CHUNK_SIZE for chunk in chunks)
    if length > CHUNK_SIZE:
        assert len(chunks) > 1
    assert leftovers(store) in ([], ["jobs/42/result.bin"])


async def test_file_is_invisible_until_the_writer_finishes(store: FileStore) -> None:
    async with store.writer("report.csv") as handle:
        handle.write(b"a,b\n" * 1000)
        assert await store.size("report.csv") is None
        with pytest.raises(StoredFileMissing):
            await read_all(store, "report.csv")
    assert await read_all(store, "report.csv") == b"a,b\n" * 1000


async def test_failed_write_leaves_nothing(store: FileStore) -> None:
    with pytest.raises(RuntimeError, match="job crashed"):
        async with store.writer("exports/broken.zip") as handle:
            handle.write(os.urandom(CHUNK_SIZE * 2))
            raise RuntimeError("job crashed")
    assert await store.size("exports/broken.zip") is None
    with pytest.raises(StoredFileMissing):
        await read_all(store, "exports/broken.zip")
    assert leftovers(store) == []


async def test_failed_overwrite_keeps_the_old_file(store: FileStore) -> None:
    await write(store, "data.json", b"old")
    with pytest.raises(RuntimeError):
        async with store.writer("data.json") as handle:
            handle.write(b"half of the new")
            raise RuntimeError
    assert await read_all(store, "data.json") == b"old"
    assert leftovers(store) in ([], ["data.json"])


async def test_overwrite(store: FileStore) -> None:
    await write(store, "a/b/c.txt", b"first version, longer")
    await write(store, "a/b/c.txt", b"second")
    assert await read_all(store, "a/b/c.txt") == b"second"
    assert await store.size("a/b/c.txt") == len(b"second")


async def test_keys_are_separate(store: FileStore) -> None:
    await write(store, "x/1", b"one")
    await write(store, "x/2", b"two")
    assert await read_all(store, "x/1") == b"one"
    assert await read_all(store, "x/2") == b"two"


async def test_delete(store: FileStore) -> None:
    await write(store, "gone.pdf", b"%PDF")
    await store.delete("gone.pdf")
    assert await store.size("gone.pdf") is None
    with pytest.raises(StoredFileMissing):
        await read_all(store, "gone.pdf")
    await store.delete("gone.pdf")  # twice: missing is no error
    await store.delete("never/written.bin")


async def test_missing_file(store: FileStore) -> None:
    assert await store.size("nothing.here") is None
    with pytest.raises(StoredFileMissing) as raised:
        await read_all(store, "nothing.here")
    assert isinstance(raised.value, FileNotFoundError)


async def test_keys_above_and_below_a_file_are_missing(store: FileStore) -> None:
    # On disk "a" is a directory and "a/b/c" runs through a file; in S3 both just don't exist.
    await write(store, "a/b", b"file")
    for key in ("a", "a/b/c"):
        assert await store.size(key) is None
        with pytest.raises(StoredFileMissing):
            await read_all(store, key)
        await store.delete(key)
    assert await read_all(store, "a/b") == b"file"


@pytest.mark.parametrize(
    "key", ["../x", "/abs", "a//b", "", "a/../b", ".", "a/", ".hidden", "a b", "x" * 256]
)
async def test_bad_keys(store: FileStore, key: str) -> None:
    with pytest.raises(ValueError, match="invalid storage key"):
        async with store.writer(key):
            pass
    with pytest.raises(ValueError, match="invalid storage key"):
        await read_all(store, key)
    with pytest.raises(ValueError, match="invalid storage key"):
        await store.size(key)
    with pytest.raises(ValueError, match="invalid storage key"):
        await store.delete(key)
    assert leftovers(store) == []


async def test_longest_key(store: FileStore) -> None:
    key = "k" * 255
    await write(store, key, b"long name")
    assert await read_all(store, key) == b"long name"


# open_store: which backend a setting selects.


def test_open_store_defaults_to_the_files_dir(tmp_path: Path) -> None:
    for url in (None, ""):
        store = open_store(url, tmp_path / "files")
        assert isinstance(store, LocalFileStore)
        assert store.root == tmp_path / "files"
        assert store.root.is_dir()


def test_open_store_file_url(tmp_path: Path) -> None:
    store = open_store(f"file://{tmp_path}/elsewhere", tmp_path / "files")
    assert isinstance(store, LocalFileStore)
    assert store.root == tmp_path / "elsewhere"


def credentials(store: S3FileStore) -> tuple[str, str]:
    # botocore keeps the resolved credentials with the client's request signer.
    frozen = store.client._request_signer._credentials.get_frozen_credentials()
    return frozen.access_key, frozen.secret_key


def test_open_store_s3_url(tmp_path: Path) -> None:
    store = open_store(
        "s3://AKID%2Bx:se%2Fcr%40et@Media-Bucket/tenant/files/"
        "?endpoint_url=http://127.0.0.1:9000&region=eu-central-1",
        tmp_path,
    )
    assert isinstance(store, S3FileStore)
    assert store.bucket == "Media-Bucket"
    assert store.prefix == "tenant/files"
    assert store.client.meta.endpoint_url == "http://127.0.0.1:9000"
    assert store.client.meta.region_name == "eu-central-1"
    assert credentials(store) == ("AKID+x", "se/cr@et")
    assert store._key("a/b.pdf") == "tenant/files/a/b.pdf"


def test_open_store_s3_credentials_from_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "from-env")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    store = open_store("s3://bucket", tmp_path)
    assert isinstance(store, S3FileStore)
    assert (store.bucket, store.prefix) == ("bucket", "")
    assert store._key("a/b.pdf") == "a/b.pdf"
    assert credentials(store) == ("from-env", "env-secret")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://host/files", "must start with s3:// or file://"),
        ("/var/lib/admit", "must start with s3:// or file://"),
        ("s3:///prefix-only", "no bucket"),
        ("s3://key@bucket", "no secret"),
        ("s3://bucket?endpoint=http://x", "unknown s3:// URL options: endpoint"),
    ],
)
def test_open_store_rejects_bad_urls(tmp_path: Path, url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        open_store(url, tmp_path)


async def test_s3_store_reaches_the_server_through_its_url(s3_endpoint: str) -> None:
    """Two stores on the same bucket and prefix see each other's files: the URL alone names
    where files live."""
    url = f"s3://testing:testing@{BUCKET}/shared?endpoint_url={s3_endpoint}&region=us-east-1"
    first, second = S3FileStore.from_url(url), S3FileStore.from_url(url)
    await write(first, "hello.txt", b"hi")
    assert await read_all(second, "hello.txt") == b"hi"
    await second.delete("hello.txt")
    assert await first.size("hello.txt") is None


async def test_s3_store_under_another_prefix_is_separate(s3_endpoint: str) -> None:
    base = f"s3://testing:testing@{BUCKET}/"
    one = S3FileStore.from_url(f"{base}one?endpoint_url={s3_endpoint}")
    two = S3FileStore.from_url(f"{base}two?endpoint_url={s3_endpoint}")
    await write(one, "same.key", b"1")
    assert await two.size("same.key") is None
