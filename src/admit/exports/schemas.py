"""Shapes of the exporter endpoints (for the docs; the run body is each exporter's own)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class InputParameterOut(BaseModel):
    name: str
    required: bool
    choices: list[str] | None = Field(
        default=None, description="The accepted values, where the input is a choice."
    )


class ExporterOut(BaseModel):
    """An exporter descriptor."""

    identifier: str
    verbose_name: str
    input_parameters: list[InputParameterOut]


class ExportRunIn(BaseModel):
    """The exporter's input parameters (see its descriptor), plus the export's language."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    format: str | None = Field(
        default=None, alias="_format", description="The file format, where it has a choice."
    )
    locale: str | None = Field(
        default=None,
        description="Language of headers and texts (e.g. `de`); default: the request's "
        "Accept-Language, else English.",
    )


class ExportStartedOut(BaseModel):
    download: str = Field(description="Where the file is fetched (download semantics).")
