"""Field types for documented response shapes: what the fast renderers emit, as JSON.

Renderers write amounts as decimal strings and times as ISO 8601 strings (``Z`` for UTC);
documenting them as such (not as Decimal or datetime) keeps the models plain descriptions,
never in the way of the rendered bytes.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

# "12.50", "-3.00": an amount as every money field renders it.
Amount = Annotated[str, Field(pattern=r"^-?[0-9]+(\.[0-9]+)?$")]
# ISO 8601 with offset or Z, e.g. "2030-01-01T19:00:00Z".
Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
