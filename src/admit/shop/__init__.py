"""The buyer's side: the public shop pages and the headless checkout API, on the sales
services the API uses (carts, orders, vouchers, quotas) and the payment providers."""

import admit.payments  # noqa: F401  (the providers and their settings)
from admit.shop import settings as _settings  # noqa: F401  (registers the shop's settings)
