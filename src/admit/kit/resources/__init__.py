"""Declared resources: CRUD written once, rows rendered straight to JSON, list pages and details,
typed filters and orderings, the list envelope, field selection, shared schemas, settings
registries, multi-lingual text and JSON-kept rows.

May import ``kit.http``, ``kit.lanes``, ``kit.stamps``, ``kit.openapi``, ``admit.db`` and
``admit.models``; no domain package.
"""
