"""The settings registry names its write schema as its owner's domain says: the kit knows no
owner kinds (events, organizers) and hard-codes none of their names."""

from __future__ import annotations

import pytest

from admit.kit.http.errors import FieldErrors
from admit.kit.resources.settings import Setting, SettingsRegistry


def _registry(name: str) -> SettingsRegistry:
    registry = SettingsRegistry(name)
    registry.register(Setting("limit", int, 3, "Limit", "x:write"))
    return registry


@pytest.mark.parametrize("name", ["ShopSettingsIn", "OrganizerSettingsIn"])
def test_the_write_schema_takes_the_given_name(name):
    model = _registry(name).model()
    assert model.__name__ == name
    assert set(model.model_fields) == {"limit"}


def test_two_registries_keep_their_own_schemas():
    shop, org = _registry("ShopSettingsIn"), _registry("OrganizerSettingsIn")
    assert shop.model() is not org.model()
    assert shop.parse({"limit": 5, "unknown": 1}, {"limit": 3}) == ({"limit": 5}, {"limit": 5})
    with pytest.raises(FieldErrors):
        org.parse({"limit": "many"}, {"limit": 3})


def test_event_settings_keep_their_schema_name():
    from admit.events.settings import EVENT_SETTINGS

    assert EVENT_SETTINGS.model().__name__ == "EventSettingsIn"
