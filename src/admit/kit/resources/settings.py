"""A registry of key/value settings: each key declared once with its type, default, label and
the permission that writes it; read and written as one JSON object.

The reference keeps an event's configuration as named settings (``payment_term_days``,
``locales``, ``attendee_names_asked``, ...) behind one endpoint. Admit declares every key it
knows in a :class:`SettingsRegistry`; a feature that needs a setting (a payment method, the
waiting list, later the shop or invoices) registers its keys where it lives, instead of a
hard-coded list in the route. Most keys are kept in one JSON column of the owner row (only
keys that were set; unset keys show their default); a key that lives elsewhere (a column of
its own, another table) names a :class:`Binding` that loads and stores it.

Validation goes through one pydantic model built from the registered types, so a setting is
checked like every other write (types, choices, lengths); rules across keys are functions
registered with :meth:`SettingsRegistry.rule`, run on the merged state.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError, create_model

from admit.kit.http.errors import FieldErrors, validation_error
from admit.kit.resources.schema import WriteModel


@dataclass(frozen=True)
class Binding:
    """Where a setting lives when it is not in the JSON column: ``load(session, owner)`` and
    ``store(session, owner, value)`` (``value`` None resets it to the default)."""

    load: Callable[[Any, Any], Awaitable[Any]]
    store: Callable[[Any, Any, Any], Awaitable[None]]


@dataclass(frozen=True)
class Setting:
    """One key: its pydantic type (checked on write), default (shown when unset), label (for
    ``?explain``) and the permission needed to change it."""

    key: str
    annotation: Any
    default: Any
    label: str
    permission: str
    help_text: str | None = None
    binding: Binding | None = None


# A rule across keys: the merged values (current overlaid with the request) in, field
# errors out ({} when fine).
Rule = Callable[[Mapping[str, Any]], dict[str, list[str]]]


class SettingsRegistry:
    """The known keys of one kind of owner (e.g. events), in registration order.
    ``model_name`` names the write schema, as the owner's domain wants it to appear in the
    OpenAPI document (the kit knows no owner kinds)."""

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self._settings: dict[str, Setting] = {}
        self._rules: list[Rule] = []
        self._model: type[BaseModel] | None = None

    def register(self, *settings: Setting) -> None:
        for setting in settings:
            if setting.key in self._settings:
                raise ValueError(f"setting {setting.key!r} is registered twice")
            self._settings[setting.key] = setting
        self._model = None

    def rule(self, rule: Rule) -> Rule:
        self._rules.append(rule)
        return rule

    def __iter__(self) -> Any:
        return iter(self._settings.values())

    def __contains__(self, key: object) -> bool:
        return key in self._settings

    def get(self, key: str) -> Setting:
        return self._settings[key]

    def model(self) -> type[BaseModel]:
        """The write schema: every key optional (absent keys are not touched, ``null``
        resets a key to its default, as the reference does)."""
        if self._model is None:
            fields: dict[str, Any] = {
                s.key: (s.annotation | None, None) for s in self._settings.values()
            }
            self._model = create_model(self.model_name, __base__=WriteModel, **fields)
        return self._model

    def values(self, stored: Mapping[str, Any]) -> dict[str, Any]:
        """Every key with its value: ``stored`` where set, else the default."""
        return {s.key: stored.get(s.key, s.default) for s in self._settings.values()}

    def parse(
        self, raw: Mapping[str, Any], current: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Checks a PATCH body: (the supplied known keys with their validated values, None
        meaning "reset"; the merged state). Unknown keys are left out, as the reference's
        serializer ignores them. Raises :class:`FieldErrors` naming every bad key."""
        known = {k: v for k, v in raw.items() if k in self._settings}
        try:
            parsed = self.model().model_validate(known)
        except ValidationError as exc:
            raise validation_error(exc) from None
        changes = {key: getattr(parsed, key) for key in known}
        dumped = {key: (None if value is None else _plain(value)) for key, value in changes.items()}
        merged = dict(current)
        for key, value in dumped.items():
            merged[key] = self._settings[key].default if value is None else value
        errors: dict[str, list[str]] = {}
        for rule in self._rules:
            for field, messages in rule(merged).items():
                errors.setdefault(field, []).extend(messages)
        if errors:
            raise FieldErrors(errors)
        return dumped, merged

    def applied(self, stored: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
        """The stored keys with checked ``changes`` made (None removes a key: its default
        shows again); keys with a :class:`Binding` are left to their owner."""
        result = dict(stored)
        for key, raw in changes.items():
            if self._settings[key].binding is not None:
                continue
            if raw is None:
                result.pop(key, None)
            else:
                result[key] = raw
        return result

    def explained(self, values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """The answer to ``?explain``: each key as its value, label and help text."""
        return {
            s.key: {
                "value": values[s.key],
                "label": s.label,
                "help_text": s.help_text,
                "readonly": False,
            }
            for s in self._settings.values()
        }

    def permissions_for(self, keys: Iterable[str]) -> dict[str, list[str]]:
        """Permission -> the keys among ``keys`` that need it."""
        needed: dict[str, list[str]] = {}
        for key in keys:
            needed.setdefault(self._settings[key].permission, []).append(key)
        return needed


def _plain(value: Any) -> Any:
    """A validated value as JSON keeps it (dates as ISO text, models as dicts)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value
