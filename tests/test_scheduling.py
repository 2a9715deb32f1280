"""The suite's own xdist units (``tests/scheduling.py``): a backend's tests stay in units of
whole modules, every other module is one unit, slow modules go before the rest."""

from __future__ import annotations

from collections import defaultdict

from tests import scheduling


def _ids() -> list[str]:
    ids = []
    for n in range(12):
        for backend in ("sqlite", "postgresql"):
            ids += [f"tests/a/test_m{n}.py::test_x[{backend}]"] * 1
            ids += [f"tests/a/test_m{n}.py::test_y[{backend}-GET-/api/v1/x]" for _ in range(n)]
    ids += ["tests/test_plain.py::test_one", "tests/test_plain.py::test_two[3-sqlite3]"]
    ids += ["tests/faults/test_x.py::test_slow"]
    ids += [f"{path}::test_{n}" for n, path in enumerate(scheduling.TOGETHER)]
    return ids


def test_backend_is_read_from_the_parameter_ids_only():
    assert scheduling.backend_of("tests/a.py::test_x[postgresql]") == "postgresql"
    assert scheduling.backend_of("tests/a.py::test_x[sqlite-GET-/x]") == "sqlite"
    assert scheduling.backend_of("tests/a.py::Case::test_x[1-postgresql]") == "postgresql"
    assert scheduling.backend_of("tests/a.py::test_x[sqlite3]") is None
    assert scheduling.backend_of("tests/sqlite.py::test_x") is None


def test_backend_units_hold_whole_modules_and_are_balanced():
    ids = _ids()
    scopes = scheduling.scopes(ids)
    assert set(scopes) == set(ids)
    units_of_module: dict[tuple[str, str], set[str]] = defaultdict(set)
    sizes: dict[str, int] = defaultdict(int)
    for nodeid, scope in scopes.items():
        backend = scheduling.backend_of(nodeid)
        if backend is None:
            continue
        assert scope.startswith(f"db-{backend}-")
        units_of_module[(backend, nodeid.split("::")[0])].add(scope)
        sizes[scope] += 1
    assert all(len(units) == 1 for units in units_of_module.values())
    for backend, chunks in scheduling.CHUNKS.items():
        mine = [size for scope, size in sizes.items() if scope.startswith(f"db-{backend}-")]
        assert len(mine) == chunks
        assert max(mine) - min(mine) <= 12  # at most the largest module apart


def test_other_modules_are_units_and_the_slow_ones_come_first():
    scopes = scheduling.scopes(_ids())
    assert scopes["tests/test_plain.py::test_one"] == "tests/test_plain.py"
    assert scopes["tests/test_plain.py::test_two[3-sqlite3]"] == "tests/test_plain.py"
    assert {scopes[f"{p}::test_{n}"] for n, p in enumerate(scheduling.TOGETHER)} == {"live-exports"}
    order = sorted(set(scopes.values()), key=lambda s: scheduling._rank(s, 1))
    first_other = order.index("tests/test_plain.py")
    assert all(s.startswith("db-") for s in order[:6])
    assert order.index("tests/faults/test_x.py") < first_other
    assert order.index("live-exports") < first_other
