"""The kept key lists of a worker stay bounded: at most MAX_LISTS lists and MAX_KEYS keys in
all, the least recently used going first (``kit/resources/keylists.py``)."""

from __future__ import annotations

from array import array

from admit.kit.resources import keylists
from admit.kit.resources.keylists import KeptKeys, KeyLists


def _kept(n: int) -> KeptKeys:
    return KeptKeys((), None, array("q", range(n)))


def test_at_most_max_lists(monkeypatch):
    monkeypatch.setattr(keylists, "MAX_LISTS", 3)
    lists = KeyLists()
    for name in "abcd":
        lists.put((name,), _kept(10))
    assert list(lists.lists) == [("b",), ("c",), ("d",)]
    assert lists.size == 30


def test_at_most_max_keys_least_recently_used_first(monkeypatch):
    monkeypatch.setattr(keylists, "MAX_KEYS", 100)
    lists = KeyLists()
    lists.put(("a",), _kept(40))
    lists.put(("b",), _kept(40))
    assert lists.get(("a",)) is not None  # now the most recently used
    lists.put(("c",), _kept(40))
    assert list(lists.lists) == [("a",), ("c",)]
    assert lists.size == 80
    lists.put(("a",), _kept(70))  # replaced: its old keys no longer count
    assert list(lists.lists) == [("a",)]
    assert lists.size == 70
