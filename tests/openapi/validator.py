"""Checks live answers against the OpenAPI document: each response's status must be documented
for its operation and its JSON body must validate against the documented schema.

Installed as an httpx response hook, so every request a scenario makes (its setup included) is
checked. It also records which query parameters each request's route read (``QueryParams``
reads), to hold the documented parameters to what the routes really take.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
from jsonschema import Draft202012Validator, FormatChecker
from starlette.datastructures import QueryParams

Op = tuple[str, str]  # (method, route template)


@dataclass
class Document:
    schema: dict[str, Any]
    ok: set[Op] = field(default_factory=set)
    answered: dict[Op, set[str]] = field(default_factory=lambda: defaultdict(set))
    failures: list[str] = field(default_factory=list)
    read_params: dict[Op, set[str]] = field(default_factory=lambda: defaultdict(set))
    _validators: dict[tuple[Op, str], Draft202012Validator] = field(default_factory=dict)
    _routes: list[tuple[str, re.Pattern[str], str]] = field(default_factory=list)
    _reading: set[str] | None = None
    _seen: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        # Literal templates before parameterised ones, so /seats/bulk_block/ is not {id}.
        for path, operations in self.schema["paths"].items():
            pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$")
            for method in operations:
                self._routes.append((method.upper(), pattern, path))
        self._routes.sort(key=lambda r: r[2].count("{"))

    @property
    def operations(self) -> set[Op]:
        return {(m.upper(), p) for p, ops in self.schema["paths"].items() for m in ops}

    def match(self, method: str, path: str) -> Op | None:
        for m, pattern, template in self._routes:
            if m == method and pattern.match(path):
                return (m, template)
        return None

    def operation(self, op: Op) -> dict[str, Any]:
        return self.schema["paths"][op[1]][op[0].lower()]

    def _validator(self, op: Op, status: str, schema: dict[str, Any]) -> Draft202012Validator:
        key = (op, status)
        if key not in self._validators:
            root = {**schema, "components": self.schema["components"]}
            self._validators[key] = Draft202012Validator(root, format_checker=FormatChecker())
        return self._validators[key]

    async def check(self, response: httpx.Response) -> None:
        request = response.request
        if not request.url.path.startswith("/api/v1/") or request.url.path.startswith(
            ("/api/v1/docs", "/api/v1/openapi.json")
        ):
            return
        op = self.match(request.method, request.url.path)
        read = self._reading or set()
        self._reading = set()
        if op is None:
            return  # an unknown URL (a 404 or 405 by routing): no operation to hold it to
        self.read_params[op] |= read
        await response.aread()
        status = str(response.status_code)
        self.answered[op].add(status)
        where = f"{request.method} {request.url.path}?{request.url.query.decode()} {status}"
        documented = self.operation(op).get("responses", {})
        if status not in documented:
            self.failures.append(f"{where}: status not documented for {op}")
            return
        if status.startswith("2"):
            self.ok.add(op)
        content = documented[status].get("content", {})
        if status in ("204", "304"):
            if response.content:
                self.failures.append(f"{where}: a body where none is documented")
            return
        json_schema = content.get("application/json", {}).get("schema")
        media = response.headers.get("content-type", "")
        if json_schema is None:
            if not content:
                self.failures.append(f"{where}: no documented content")
            return
        if not media.startswith("application/json"):
            self.failures.append(f"{where}: documented JSON, answered {media}")
            return
        body = orjson.loads(response.content)
        errors = sorted(
            self._validator(op, status, json_schema).iter_errors(body), key=lambda e: e.path
        )
        for error in errors[:3]:
            at = "/".join("N" if isinstance(p, int) else str(p) for p in error.absolute_path)
            problem = f"{op[0]} {op[1]} {status}: at {at or '(body)'}: {error.message[:300]}"
            if problem not in self._seen:  # one line per problem, not per request
                self._seen.add(problem)
                self.failures.append(f"{problem} (first: {where})")

    @contextmanager
    def tracking_query_reads(self) -> Iterator[None]:
        """Records the names of query parameters read while a request runs."""
        originals = {
            name: getattr(QueryParams, name)
            for name in ("get", "getlist", "__contains__", "__getitem__")
        }
        document = self

        def wrap(name: str) -> Any:
            original = originals[name]

            def reader(params: Any, key: Any, *args: Any) -> Any:
                if document._reading is None:
                    document._reading = set()
                document._reading.add(str(key))
                return original(params, key, *args)

            return reader

        for name in originals:
            setattr(QueryParams, name, wrap(name))
        try:
            yield
        finally:
            for name, original in originals.items():
                setattr(QueryParams, name, original)

    async def before(self, request: httpx.Request) -> None:
        self._reading = set()
