"""The hot path's tools: the fast lane past the framework, fast reads on the native pool,
coalescing of concurrent calls, SQLAlchemy statements inside PL/pgSQL, and write locks.

May import ``kit.http`` (errors, bodies) and ``admit.db``; no domain package.
"""
