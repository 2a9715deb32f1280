"""The request's edge: the outer layers (request ids, access log, security headers, health, rate
limits, ``HEAD``/``OPTIONS``), error bodies, JSON bodies, link hosts, conditional requests, the
one permission check (``context``) and the request's session and transaction.

May import ``admit.config``, ``admit.db``, ``admit.models`` and other parts of kit; no domain
package.
"""
