"""The OpenAPI document: installed and served (``document``, with the docs page's files in
``static/``), completed with the answers, query parameters and errors FastAPI cannot see
(``complete``, ``responses``, ``query``, ``errors``, ``types``) and described in plain words
(``describe``).

May import ``kit.resources`` and ``kit.http``; no domain package.
"""
