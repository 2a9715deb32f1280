"""``include=`` and ``exclude=`` field selection on rendered objects, as the reference offers
it on orders and order positions.

Both are repeatable query parameters naming fields, with dots into nested objects and lists
of objects (``positions.downloads``). ``include`` keeps only the named fields (a nested name
keeps its parent, narrowed to what is named below it); ``exclude`` then removes fields, so
``exclude`` wins where both name one. Unknown names are ignored, as the reference ignores
them. The selection is applied to the rendered dicts before they are written as JSON; a kept
page (``kit/stamps/pagecache.py``) is keyed by the whole query string, selection included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

INCLUDE = "include"
EXCLUDE = "exclude"
MAX_PATHS = 200  # per parameter: a selection is a handful of names, not a payload


_WHOLE = "\x00whole"


def _tree(paths: Iterable[str]) -> dict[str, Any]:
    """``["a", "b.c", "b.d"]`` -> ``{"a": {}, "b": {"c": {}, "d": {}}}``: an empty dict below
    a name means the whole field (``a`` given whole beats ``a.x`` given too)."""
    tree: dict[str, Any] = {}
    for path in paths:
        parts = [p for p in path.split(".") if p]
        node = tree
        for part in parts:
            node = node.setdefault(part, {})
        if parts:
            node[_WHOLE] = True
    return _normalize(tree)


def _normalize(tree: dict[str, Any]) -> dict[str, Any]:
    return {
        key: {} if below.get(_WHOLE) else _normalize(below)
        for key, below in tree.items()
        if key != _WHOLE
    }


def _each(value: Any) -> Iterable[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield item


def _keep(obj: dict[str, Any], tree: Mapping[str, Any]) -> None:
    for key in [k for k in obj if k not in tree]:
        del obj[key]
    for key, below in tree.items():
        if below and key in obj:
            for child in _each(obj[key]):
                _keep(child, below)


def _drop(obj: dict[str, Any], tree: Mapping[str, Any]) -> None:
    for key, below in tree.items():
        if key not in obj:
            continue
        if not below:
            del obj[key]
        else:
            for child in _each(obj[key]):
                _drop(child, below)


@dataclass(frozen=True)
class FieldSelection:
    include: Mapping[str, Any]
    exclude: Mapping[str, Any]

    @classmethod
    def of(cls, include: Sequence[str], exclude: Sequence[str]) -> FieldSelection | None:
        """None when nothing is selected (the answer stays as rendered)."""
        include = [p.strip() for p in include[:MAX_PATHS] if p.strip()]
        exclude = [p.strip() for p in exclude[:MAX_PATHS] if p.strip()]
        if not include and not exclude:
            return None
        return cls(include=_tree(include), exclude=_tree(exclude))

    @classmethod
    def from_query(cls, params: Any) -> FieldSelection | None:
        """From a request's query parameters (``include`` / ``exclude``, repeatable)."""
        return cls.of(params.getlist(INCLUDE), params.getlist(EXCLUDE))

    def apply(self, objects: Iterable[dict[str, Any]]) -> None:
        """Narrows each object in place."""
        for obj in objects:
            if self.include:
                _keep(obj, self.include)
            if self.exclude:
                _drop(obj, self.exclude)
