"""OpenAPI for routes that parse their own JSON body (``openapi_extra``).

Apart from the document's installation so that the declared resources (``kit/resources``) and
every route can describe their bodies without importing what builds the document, which reads
the resources in turn.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

# The models named by bodies, added to the document's components when it is built.
BODY_MODELS: dict[str, type[BaseModel]] = {}


def json_body(model: type[BaseModel] | None, *, many: bool = False) -> dict[str, Any]:
    """``openapi_extra`` documenting a JSON request body parsed by the handler itself."""
    if model is None:
        return {}
    BODY_MODELS[model.__name__] = model
    ref: dict[str, Any] = {"$ref": f"#/components/schemas/{model.__name__}"}
    schema = {"type": "array", "items": ref} if many else ref
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def empty_body() -> dict[str, Any]:
    """``openapi_extra`` for a route that reads a JSON object but takes no field of it."""
    schema = {"type": "object", "description": "No options: send `{}` or no body."}
    return {"requestBody": {"required": False, "content": {"application/json": {"schema": schema}}}}
