"""Change stamps and what they make cheap: the catalog's stamp and ``If-Modified-Since``
(``catalog``), the ``X-Page-Generated`` bound (``page``) and the list pages a worker keeps while
nothing they show changed (``pagecache``). The triggers that move parent rows' stamps are
declared with the models (``models/stamp_triggers.py``): models import no kit.

May import ``admit.db``, ``admit.models``, ``kit.http`` and ``kit.lanes``; no domain package.
"""
