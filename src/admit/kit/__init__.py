"""Generic HTTP and data plumbing, in named parts; imports no domain package.

- ``kit.http``: the request's edge: layers, errors, bodies, headers, logs, health, rate limits,
  conditional requests, the permission check and the request's transaction.
- ``kit.resources``: declared CRUD resources, rendering straight to JSON, lists, filters, pages,
  shared schemas, settings registries and multi-lingual text.
- ``kit.lanes``: the fast lane past the framework, fast reads, coalescing, PL/pgSQL, write locks.
- ``kit.idempotency``: ``X-Idempotency-Key`` on the edge and on the fast lane, and its rows.
- ``kit.openapi``: the OpenAPI document completed, described and served.
- ``kit.stamps``: the catalog's change stamp, the page bound and the kept list pages.
- ``kit.pdf``: what every PDF needs (fonts).

Every part may import ``admit.config``, ``admit.db``, ``admit.models`` and other parts of kit;
none imports a domain package. The job engine, the file store and downloads are a subsystem of
their own (``admit.jobs``), not plumbing.
"""
