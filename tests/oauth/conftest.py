"""The OAuth tests' fixtures live in :mod:`tests.oauth.fixtures` (shared with tests/web)."""

from tests.oauth.fixtures import alice, api, app, web  # noqa: F401
