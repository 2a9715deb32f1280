"""Shapes of the shredder endpoints (for validation of the one body, and for the docs)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ShredderOut(BaseModel):
    """A shredder descriptor."""

    identifier: str
    verbose_name: str


class ShredExportIn(BaseModel):
    shredders: list[str] = Field(
        description="Identifiers of the shredders to run: non-empty, each known, each once."
    )


class ShredExportOut(BaseModel):
    download: str = Field(description="Where the export's ZIP is fetched (download semantics).")
    shred: str = Field(description="POST here to shred the data once the export file exists.")


class ShredStartedOut(BaseModel):
    status: str = Field(description="Where the shred's status is polled (kept about an hour).")


class ShredStatusOut(BaseModel):
    status: str = Field(description="finished, waiting, running or failed")
    message: str | None = Field(default=None, description="Why a failed shred failed.")
