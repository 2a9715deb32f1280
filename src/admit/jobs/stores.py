"""Which file store the settings name, apart from both stores: the S3 store builds on the local
store's helpers, so a factory inside ``storage.py`` that imports the S3 store made a circle.
The S3 store (and boto3) is imported only when a setting names it.
"""

from __future__ import annotations

from pathlib import Path

from admit.jobs.storage import FileStore, LocalFileStore


def open_store(storage_url: str | None, files_dir: Path) -> FileStore:
    """The store the settings name: ``s3://…`` or, by default, the local files directory."""
    if storage_url and storage_url.startswith("s3://"):
        from admit.jobs.storage_s3 import S3FileStore

        return S3FileStore.from_url(storage_url)
    if storage_url and storage_url.startswith("file://"):
        return LocalFileStore(Path(storage_url.removeprefix("file://")))
    if storage_url:
        raise ValueError("ADMIT_STORAGE_URL must start with s3:// or file://")
    return LocalFileStore(files_dir)
