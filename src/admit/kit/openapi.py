"""OpenAPI for routes that parse their own JSON body, and docs served from installed files.

``kit/openapi_complete.py`` then adds what the routes do not declare themselves: the answers of
routes that render their own JSON, every list's query parameters, every error answer."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema
from starlette.requests import Request
from starlette.responses import HTMLResponse

_BODY_MODELS: dict[str, type[BaseModel]] = {}


def json_body(model: type[BaseModel] | None, *, many: bool = False) -> dict[str, Any]:
    """``openapi_extra`` documenting a JSON request body parsed by the handler itself."""
    if model is None:
        return {}
    _BODY_MODELS[model.__name__] = model
    ref: dict[str, Any] = {"$ref": f"#/components/schemas/{model.__name__}"}
    schema = {"type": "array", "items": ref} if many else ref
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def _drop_validation_responses(schema: dict[str, Any]) -> None:
    """FastAPI documents a 422 for every route with parameters; Admit never answers one."""
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            operation.get("responses", {}).pop("422", None)
    components = schema.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)


def install_openapi(app: FastAPI, prefix: str = "/api/v1") -> None:
    def custom_openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(
            title="Admit ticketing API",
            version=app.version,
            description="pretix-compatible event-ticketing REST API. Authenticate with "
            "`Authorization: Token <team API token>`.",
            routes=app.routes,
        )
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        if _BODY_MODELS:
            _, defs = models_json_schema(
                [(m, "validation") for m in _BODY_MODELS.values()],
                ref_template="#/components/schemas/{model}",
            )
            for name, definition in defs.get("$defs", {}).items():
                components.setdefault(name, definition)
        _drop_validation_responses(schema)
        from admit.kit.openapi_complete import complete  # imports every response schema

        complete(schema, app, prefix)
        schema["components"]["securitySchemes"] = {
            "TokenAuth": {"type": "apiKey", "in": "header", "name": "Authorization"}
        }
        schema["security"] = [{"TokenAuth": []}]
        app.openapi_schema = schema
        return schema

    app.openapi = custom_openapi  # type: ignore[method-assign]

    import swagger_ui_bundle

    app.mount(
        f"{prefix}/docs/static",
        StaticFiles(directory=swagger_ui_bundle.swagger_ui_path),
        name="swagger-static",
    )

    @app.get(f"{prefix}/openapi.json", include_in_schema=False)
    async def openapi_json() -> dict[str, Any]:
        return app.openapi()

    @app.get(f"{prefix}/docs", include_in_schema=False)
    async def docs(_request: Request) -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=f"{prefix}/openapi.json",
            title="Admit API",
            swagger_js_url=f"{prefix}/docs/static/swagger-ui-bundle.js",
            swagger_css_url=f"{prefix}/docs/static/swagger-ui.css",
            swagger_favicon_url=f"{prefix}/docs/static/favicon-32x32.png",
        )
