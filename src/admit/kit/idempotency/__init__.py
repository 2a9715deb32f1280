"""``X-Idempotency-Key``: the edge layer (``layer``), keyed fast-lane requests (``lane``,
``inline``), routes that refuse a key (``secret``) and the rows behind it all (``store``).

May import ``admit.config``, ``admit.db``, ``admit.models``, ``kit.http`` and ``kit.lanes``; no
domain package.
"""
