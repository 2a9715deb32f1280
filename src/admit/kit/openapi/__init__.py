"""The OpenAPI document: installed and served (``document``, with the docs page's files in
``static/``), completed with the answers, query parameters and errors FastAPI cannot see
(``complete``, ``responses``, ``query``, ``errors``, ``types``) and described in plain words
(``describe``); routes describe the bodies they parse themselves with ``bodies``.

Domains register what only they know (the answers they render themselves, their flags and
expansions: ``responses.document``, ``query.document``, ``query.shaper``) at the import of their
routes. May import ``kit.resources`` and ``kit.http``; no domain package.
"""
