"""The OpenAPI document installed on the application, and docs served from installed files.

The docs page is Swagger UI 5 (the first to render OpenAPI 3.1, which this document is), from
the ``fastapi-swagger`` wheel's copy of the ``swagger-ui-dist`` files: nothing is fetched from
a CDN, and ``make run`` needs no npm. Swagger UI is started by a served script
(``kit/openapi/static/swagger-init.js``), so the page's Content-Security-Policy allows no inline
script.

``kit/openapi/complete.py`` then adds what the routes do not declare themselves: the answers of
routes that render their own JSON, every list's query parameters, every error answer."""

from __future__ import annotations

from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.staticfiles import StaticFiles
from pydantic.json_schema import models_json_schema
from starlette.requests import Request
from starlette.responses import HTMLResponse

from admit.kit.openapi.bodies import BODY_MODELS


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
        if BODY_MODELS:
            _, defs = models_json_schema(
                [(m, "validation") for m in BODY_MODELS.values()],
                ref_template="#/components/schemas/{model}",
            )
            for name, definition in defs.get("$defs", {}).items():
                components.setdefault(name, definition)
        _drop_validation_responses(schema)
        from admit.kit.openapi.complete import complete  # imports every response schema

        complete(schema, app, prefix)
        schema["components"]["securitySchemes"] = {
            "TokenAuth": {"type": "apiKey", "in": "header", "name": "Authorization"}
        }
        schema["security"] = [{"TokenAuth": []}]
        app.openapi_schema = schema
        return schema

    app.openapi = custom_openapi  # type: ignore[method-assign]

    app.mount(
        f"{prefix}/docs/static",
        StaticFiles(directory=swagger_ui_dist()),
        name="swagger-static",
    )
    app.mount(
        f"{prefix}/docs/admit",
        StaticFiles(directory=Path(__file__).parent / "static"),
        name="docs-static",
    )
    page = docs_page(prefix)

    @app.get(f"{prefix}/openapi.json", include_in_schema=False)
    async def openapi_json() -> dict[str, Any]:
        return app.openapi()

    @app.get(f"{prefix}/docs", include_in_schema=False)
    async def docs(_request: Request) -> HTMLResponse:
        return HTMLResponse(page)


def swagger_ui_dist() -> Path:
    """The folder of Swagger UI's ``swagger-ui-bundle.js`` and ``swagger-ui.css``."""
    return Path(str(files("fastapi_swagger") / "resources"))


def docs_page(prefix: str) -> str:
    """The HTML of the docs page: Swagger UI's files and the served script starting it."""
    static = escape(f"{prefix}/docs/static")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Admit API</title>
<link rel="stylesheet" href="{static}/swagger-ui.css">
<link rel="icon" type="image/png" href="{static}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui" data-openapi-url="{escape(prefix)}/openapi.json"></div>
<script src="{static}/swagger-ui-bundle.js"></script>
<script src="{escape(prefix)}/docs/admit/swagger-init.js"></script>
</body>
</html>
"""
