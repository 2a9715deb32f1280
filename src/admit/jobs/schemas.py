from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, Field


class JobOut(BaseModel):
    """A background job of the caller's (an Admit extension)."""

    id: str = Field(description="The job's opaque id.")
    kind: str
    status: str = Field(description="waiting, running, finished or failed")
    percentage: int | None = Field(description="How far a running job is (0-100), if known.")
    message: str | None
    created: dt.datetime
    started: dt.datetime | None
    finished: dt.datetime | None
    expires: dt.datetime | None = Field(description="When the job and its result are deleted.")
    download: str | None = Field(description="The result's URL once there is a file.")
