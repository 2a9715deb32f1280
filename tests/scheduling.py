"""How ``make test`` (``pytest -n 2 --dist loadgroup``) spreads the suite over its processes.

xdist's own ``loadgroup`` reads ``xdist_group`` marks through a test-id suffix that pytest 9
no longer lets it set: with it every test was a unit of its own, both processes ran every
module, and a module's fixtures (a server, a browser, the OpenAPI scenarios, the 40,000-row
export shop) were built once in each. :class:`GroupScheduling` takes its place and forms the
units from the test ids alone:

- a test on a backend (the ``database_url`` parameter, ``[sqlite…]``/``[postgresql…]`` in its
  id) needs that backend's database and app, built once per process and again whenever the
  process turns to the other backend. Each backend's tests are cut into :data:`CHUNKS` units
  of whole modules, balanced by their number of tests: more units than processes, so the
  processes end together, and each unit costs one database build (seconds);
- every other module is a unit (its module fixtures built once), modules listed in
  :data:`TOGETHER` share one (a session fixture they share);
- the backend units go first, biggest first, then the modules known to wait tens of seconds
  on processes they start (:data:`SLOW`), then the rest by size, so the run does not end with
  one process idle while the other waits out a long test.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Sequence

from xdist.scheduler import LoadScopeScheduling

BACKENDS = ("sqlite", "postgresql")
# Units per backend. A PostgreSQL test costs about twice a SQLite one (a round trip per
# statement), so its units are smaller.
CHUNKS = {"sqlite": 2, "postgresql": 4}
# Modules run by one process because they share a session fixture.
TOGETHER = {
    "tests/exports/test_live_exports.py": "live-exports",
    "tests/exports/test_killed_export_cleanup.py": "live-exports",
}
# Modules and folders whose tests start servers, workers or browsers and wait on them.
SLOW = (
    "tests/faults/",
    "tests/live_rush/",
    "tests/jobs/",
    "tests/exports/test_live_exports.py",
    "tests/exports/test_killed_export_cleanup.py",
    "tests/scheduled_exports/",
    "tests/shredders/test_live.py",
    "tests/checkin/test_live_rush.py",
    "tests/webhooks/test_node_death.py",
    "tests/web/test_browser.py",
    "tests/web/test_accessibility.py",
    "tests/openapi/test_docs_page.py",
    "tests/test_cli.py",
    "tests/test_newcomer.py",
    "tests/test_serving.py",
)


def backend_of(nodeid: str) -> str | None:
    """The backend a test runs on, read from its parameter ids (``test[postgresql-x]``)."""
    if not nodeid.endswith("]") or "::" not in nodeid:
        return None
    name = nodeid.split("::", 1)[1]
    if "[" not in name:
        return None
    ids = name[name.index("[") + 1 : -1].split("-")
    return next((b for b in BACKENDS if b in ids), None)


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def scopes(nodeids: Sequence[str]) -> dict[str, str]:
    """Each test id's unit (``db-<backend>-<n>``, a :data:`TOGETHER` name or its module)."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for nodeid in nodeids:
        backend = backend_of(nodeid)
        if backend is not None:
            counts[backend][_module(nodeid)] += 1
    unit_of: dict[tuple[str, str], str] = {}
    for backend, by_module in counts.items():
        loads = [0] * CHUNKS.get(backend, 1)
        # Largest module first, each to the lightest unit so far (ties by name).
        for module, count in sorted(by_module.items(), key=lambda kv: (-kv[1], kv[0])):
            chunk = loads.index(min(loads))
            loads[chunk] += count
            unit_of[(backend, module)] = f"db-{backend}-{chunk}"
    found = {}
    for nodeid in nodeids:
        backend, module = backend_of(nodeid), _module(nodeid)
        if backend is not None:
            found[nodeid] = unit_of[(backend, module)]
        else:
            found[nodeid] = TOGETHER.get(module, module)
    return found


def _rank(scope: str, size: int) -> tuple[int, int]:
    if scope.startswith("db-"):
        return (0, -size)
    if scope in TOGETHER.values() or scope.startswith(SLOW):
        return (1, -size)
    return (2, -size)


class GroupScheduling(LoadScopeScheduling):
    """xdist's scope scheduling over the units of :func:`scopes`, in the order of
    :func:`_rank`; a process asks for the next unit when it is down to its last tests."""

    _scopes: dict[str, str] = {}

    def _split_scope(self, nodeid: str) -> str:
        return self._scopes.get(nodeid, nodeid)

    def schedule(self) -> None:
        assert self.collection_is_completed
        if self.collection is not None:
            for node in self.nodes:
                self._reschedule(node)
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = list(next(iter(self.registered_collections.values())))
        if not self.collection:
            return
        self._scopes = scopes(self.collection)
        units: dict[str, dict[str, bool]] = {}
        for nodeid in self.collection:
            units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
        ordered = sorted(units.items(), key=lambda kv: _rank(kv[0], len(kv[1])))
        self.workqueue = OrderedDict(ordered)
        for _ in range(max(0, len(self.nodes) - len(self.workqueue))):
            unused, _work = self.assigned_work.popitem()
            unused.shutdown()
        for node in self.nodes:
            self._assign_work_unit(node)
        for node in self.nodes:
            self._reschedule(node)
        if not self.workqueue:
            for node in self.nodes:
                node.shutdown()
