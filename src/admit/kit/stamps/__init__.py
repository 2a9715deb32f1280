"""Change stamps and what they make cheap: the catalog's stamp and ``If-Modified-Since``
(``catalog``), parent rows' stamps moved by triggers (``parent``), the ``X-Page-Generated`` bound
(``page``) and the list pages a worker keeps while nothing they show changed (``pagecache``).

May import ``admit.db``, ``admit.models``, ``kit.http`` and ``kit.lanes``; no domain package.
"""
