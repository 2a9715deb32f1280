"""The outermost edge layers, in their order (outermost first).

The request id and access log wrap everything, so even a refused or health-check answer has
an id and a log line; the security headers come next, so they are on every answer, the 429s
and probes included; ``HEAD`` becomes a bodiless ``GET`` and ``OPTIONS`` is answered next (so
the probes, the rate limits and the fast lanes serve ``HEAD`` as they serve ``GET``); the
probes answer before the rate limits (a load balancer is never
throttled); the rate limits turn a request away before any other work is done for it.
"""

from __future__ import annotations

from admit.kit.http.headers import security_headers_layer
from admit.kit.http.health import health_layer
from admit.kit.http.logs import request_log_layer
from admit.kit.http.methods import methods_layer
from admit.kit.http.ratelimit import rate_limit_layer

OUTER_LAYERS = (
    request_log_layer,
    security_headers_layer,
    methods_layer,
    health_layer,
    rate_limit_layer,
)
