"""How a buyer pays: one provider interface the shop, its headless checkout and later the API's
payments and refunds share (``providers.py``), and the providers Admit ships with: ``free``,
``banktransfer`` and ``giftcard``. Importing the package registers them and their settings."""

from admit.payments import builtin as _builtin  # noqa: F401  (registers the providers)
from admit.payments import settings as _settings  # noqa: F401  (registers the settings)
