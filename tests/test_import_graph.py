"""The package layering, written as a test over the import graph of ``src/admit`` (issue 32).

The graph is read with :mod:`ast`, not by importing anything, so a rule cannot be met by import
order luck. Every ``import`` counts wherever it stands: at the top, inside a function or a method
(a deferred import is a circle hidden, not removed). The one exception is an import under
``if TYPE_CHECKING:``, which never runs: it cannot close a circle at runtime, so the circle rule
skips it, but the layer rules still count it (a type is knowledge of the other side too).

An edge goes to the module named: ``from admit.x import y`` is an edge to ``admit.x.y`` when that is
a module, else to ``admit.x`` (a package's ``__init__`` is the module ``admit.x``). Importing
``admit.x.y`` also runs ``admit/x/__init__.py``, but that implied edge is not drawn: a package face
that imports its parts to fill a registry (``exports/exporters/__init__.py``) would otherwise be
in a circle with every part it registers.

The rules, each its own test below:

- plumbing: ``admit.kit`` imports only ``admit.kit``, ``admit.models`` and the neutral top-level
  modules (:data:`NEUTRAL`: ``db``, ``config``, ``migrate`` — the schema upgrade — and ``console``,
  what every command-line sub-app shares), which in turn import only that plumbing. Every other
  top-level package or module (``auth``, ``orders``, ``jobs``, ``app``, ``cli`` …) is a domain or
  an entry, and domains register with the plumbing instead;
- ``admit.models`` imports nothing from ``admit.kit``;
- the catalog (``events``, ``catalog``, ``subevents``, ``seating``) imports no sales package
  (``quotas``, ``orders``, ``carts``, ``vouchers``, ``checkin``);
- the job engine ``admit.jobs`` imports what the plumbing may, plus itself, and no job kind:
  the kinds register with it, and only the entries outside ``jobs`` (``admit.app``, ``admit.cli``
  and ``admit.all_tasks``, which the worker and scheduler commands import) import them all;
- no import circle between modules;
- no module over :data:`MAX_LINES` lines (migrations aside).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "admit"
SKIPPED = ("admit.migrations",)
MAX_LINES = 450

NEUTRAL = ("admit.db", "admit.config", "admit.migrate", "admit.console")
PLUMBING = ("admit.kit", "admit.models", *NEUTRAL)
CATALOG = ("admit.events", "admit.catalog", "admit.subevents", "admit.seating")
SALES = ("admit.quotas", "admit.orders", "admit.carts", "admit.vouchers", "admit.checkin")


@dataclass(frozen=True)
class Edge:
    """One import statement's dependency, kept with where it stands for the failure messages."""

    source: str
    target: str
    line: int
    deferred: bool  # inside a function or method
    typing_only: bool  # under ``if TYPE_CHECKING:``

    def __str__(self) -> str:
        where = " (in a function)" if self.deferred else ""
        where += " (TYPE_CHECKING)" if self.typing_only else ""
        return f"{self.source} -> {self.target}  line {self.line}{where}"


@dataclass
class Graph:
    modules: dict[str, Path]
    packages: set[str]
    edges: list[Edge]
    unresolved: list[str]

    def adjacency(self, *, runtime_only: bool = True) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {name: set() for name in self.modules}
        for edge in self.edges:
            if runtime_only and edge.typing_only:
                continue
            out[edge.source].add(edge.target)
        return out


def within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def collect_modules(source: Path, package: str, skipped: Iterable[str] = ()) -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in sorted((source / package).rglob("*.py")):
        parts = list(path.relative_to(source).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        if not within(name, skipped):
            modules[name] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _import_nodes(tree: ast.AST) -> Iterable[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    """Every import node with (deferred, typing_only), walking into functions and branches."""
    stack: list[tuple[ast.AST, bool, bool]] = [(tree, False, False)]
    while stack:
        node, deferred, typing_only = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, deferred, typing_only
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend((child, deferred, True) for child in node.body)
            stack.extend((child, deferred, typing_only) for child in node.orelse)
            continue
        inner = deferred or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        stack.extend((child, inner, typing_only) for child in ast.iter_child_nodes(node))


def _longest_module(name: str, modules: Mapping[str, Path]) -> str | None:
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def imports_of(
    name: str, path: Path, modules: Mapping[str, Path], packages: set[str], package: str
) -> tuple[list[Edge], list[str]]:
    """The edges from one module into the package, and the imports of it that name no module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    edges: list[Edge] = []
    unresolved: list[str] = []
    own_package = name if name in packages else name.rpartition(".")[0]

    def add(target: str | None, wanted: str, node: ast.stmt, deferred: bool, typing: bool) -> None:
        if target is None:
            unresolved.append(f"{name}: line {node.lineno} imports {wanted}")
        elif target != name:
            edges.append(Edge(name, target, node.lineno, deferred, typing))

    for node, deferred, typing_only in _import_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if within(alias.name, (package,)):
                    target = _longest_module(alias.name, modules)
                    add(target, alias.name, node, deferred, typing_only)
            continue
        if node.level:
            base_parts = own_package.split(".")
            if node.level > 1:
                base_parts = base_parts[: -(node.level - 1)]
            base = ".".join([*base_parts, *([node.module] if node.module else [])])
        else:
            base = node.module or ""
        if not within(base, (package,)):
            continue
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            if alias.name != "*" and submodule in modules:
                add(submodule, submodule, node, deferred, typing_only)
            else:
                add(base if base in modules else None, base, node, deferred, typing_only)
    return edges, unresolved


def build_graph(source: Path, package: str, skipped: Iterable[str] = ()) -> Graph:
    modules = collect_modules(source, package, skipped)
    packages = {name for name, path in modules.items() if path.name == "__init__.py"}
    edges: list[Edge] = []
    unresolved: list[str] = []
    for name, path in modules.items():
        found, missing = imports_of(name, path, modules, packages, package)
        edges.extend(found)
        unresolved.extend(missing)
    # An import of a skipped module (the migrations) is no edge of the graph; ``from x import a, b``
    # naming two things of one module is one edge.
    edges = list(dict.fromkeys(e for e in edges if e.target in modules))
    return Graph(modules, packages, edges, unresolved)


def circles(adjacency: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(adjacency):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(adjacency.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(adjacency.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


@functools.cache
def admit_graph() -> Graph:
    return build_graph(SOURCE, PACKAGE, SKIPPED)


def breaking(edges: Iterable[Edge], sources: Iterable[str], allowed: Iterable[str]) -> list[Edge]:
    """The edges leaving ``sources`` for anything outside ``allowed`` (and outside ``admit``)."""
    sources, allowed = tuple(sources), tuple(allowed)
    return [
        e
        for e in edges
        if within(e.source, sources) and e.target != PACKAGE and not within(e.target, allowed)
    ]


def entering(edges: Iterable[Edge], sources: Iterable[str], banned: Iterable[str]) -> list[Edge]:
    sources, banned = tuple(sources), tuple(banned)
    return [e for e in edges if within(e.source, sources) and within(e.target, banned)]


def report(title: str, edges: list[Edge]) -> str:
    ordered = sorted(edges, key=lambda e: (e.source, e.line, e.target))
    return f"{title}: {len(edges)} import(s)\n" + "\n".join(f"  {e}" for e in ordered)


# --- the rules --------------------------------------------------------------------------------


def test_kit_imports_no_domain_package():
    bad = breaking(admit_graph().edges, ["admit.kit"], PLUMBING)
    assert not bad, report("admit.kit imports outside the plumbing", bad)


def test_neutral_modules_import_only_plumbing():
    bad = breaking(admit_graph().edges, NEUTRAL, PLUMBING)
    assert not bad, report("db, config, migrate or console import outside the plumbing", bad)


def test_models_import_nothing_from_kit():
    bad = entering(admit_graph().edges, ["admit.models"], ["admit.kit"])
    assert not bad, report("admit.models imports admit.kit", bad)


def test_catalog_imports_no_sales_package():
    bad = entering(admit_graph().edges, CATALOG, SALES)
    assert not bad, report("the catalog imports sales packages", bad)


def test_job_engine_imports_no_job_kind():
    bad = breaking(admit_graph().edges, ["admit.jobs"], [*PLUMBING, "admit.jobs"])
    assert not bad, report("admit.jobs imports job kinds (or other domains)", bad)


def test_no_import_circles():
    found = circles(admit_graph().adjacency(runtime_only=True))
    lines = [f"  {len(c)} modules: " + ", ".join(c) for c in found]
    assert not found, f"{len(found)} import circle(s):\n" + "\n".join(lines)


def test_no_module_over_the_line_limit():
    graph = admit_graph()
    sizes = {
        name: len(path.read_text(encoding="utf-8").splitlines())
        for name, path in graph.modules.items()
    }
    long = sorted((n, name) for name, n in sizes.items() if n > MAX_LINES)
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(
        f"  {name}: {n}" for n, name in long
    )


# --- the test checks itself --------------------------------------------------------------------


def test_the_circle_finder_finds_known_circles_and_no_false_ones():
    graph = {
        "a": {"b"},
        "b": {"c"},
        "c": {"a", "d"},  # a -> b -> c -> a
        "d": {"e"},
        "e": {"d"},  # d <-> e
        "f": {"a", "g"},  # leads into a circle but is not in one
        "g": set(),
        "h": {"h"},  # a self-import is not a circle between modules
    }
    assert circles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert circles({"x": {"y"}, "y": {"z"}, "z": set()}) == []
    # A long chain closing on itself, deeper than Python's recursion limit would allow.
    chain = {f"m{i}": {f"m{i + 1}"} for i in range(5000)} | {"m5000": {"m0"}}
    assert [len(c) for c in circles(chain)] == [5001]


def test_the_reader_resolves_every_kind_of_import(tmp_path: Path):
    pkg = tmp_path / "demo"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text("REGISTRY = {}\n")
    (pkg / "sub" / "__init__.py").write_text("from . import leaf\n")
    (pkg / "sub" / "leaf.py").write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import json\n"
        "from ..base import REGISTRY\n"
        "if TYPE_CHECKING:\n"
        "    from demo.other import Thing\n"
        "else:\n"
        "    import demo.sub.deep.thing as t\n"
        "def later():\n"
        "    from demo import other\n"
        "class K:\n"
        "    async def m(self):\n"
        "        from demo.missing import nothing\n"
    )
    (pkg / "sub" / "deep").mkdir()
    (pkg / "sub" / "deep" / "__init__.py").write_text("")
    (pkg / "sub" / "deep" / "thing.py").write_text("from demo.sub.leaf import later\n")
    (pkg / "other.py").write_text("from .sub import leaf\nfrom . import base\nThing = 1\n")
    (pkg / "migrations").mkdir()
    (pkg / "migrations" / "__init__.py").write_text("from demo import other\n")

    graph = build_graph(tmp_path, "demo", skipped=["demo.migrations"])
    assert "demo.migrations" not in graph.modules
    assert {(e.source, e.target, e.deferred, e.typing_only) for e in graph.edges} == {
        ("demo.sub", "demo.sub.leaf", False, False),
        ("demo.sub.leaf", "demo.base", False, False),
        ("demo.sub.leaf", "demo.other", False, True),
        ("demo.sub.leaf", "demo.sub.deep.thing", False, False),
        ("demo.sub.leaf", "demo.other", True, False),
        ("demo.sub.deep.thing", "demo.sub.leaf", False, False),
        ("demo.other", "demo.sub.leaf", False, False),
        ("demo.other", "demo.base", False, False),
    }
    assert graph.unresolved == ["demo.sub.leaf: line 13 imports demo.missing"]
    assert circles(graph.adjacency()) == [["demo.other", "demo.sub.deep.thing", "demo.sub.leaf"]]
    # Without the deferred import the circle is leaf <-> deep.thing only; the TYPE_CHECKING one
    # never closes a circle on its own.
    deferred_out = {k: v - {"demo.other"} for k, v in graph.adjacency().items()}
    assert circles(deferred_out) == [["demo.sub.deep.thing", "demo.sub.leaf"]]
    assert breaking(graph.edges, ["demo.sub"], ["demo.sub", "demo.base"]) == [
        e for e in graph.edges if e.source == "demo.sub.leaf" and e.target == "demo.other"
    ]


def test_the_graph_covers_the_whole_package():
    graph = admit_graph()
    assert not graph.unresolved, "imports naming no module:\n" + "\n".join(graph.unresolved)
    assert len(graph.modules) > 350, len(graph.modules)
    assert len(graph.edges) > 1200, len(graph.edges)
    assert "admit.app" in graph.modules and "admit.kit" in graph.packages
    assert not any(within(name, SKIPPED) for name in graph.modules)
    # Most modules (not counting packages' faces, often a docstring only) import something of it.
    plain = set(graph.modules) - graph.packages
    importing = {e.source for e in graph.edges} & plain
    assert len(importing) > 0.8 * len(plain), (len(importing), len(plain))
    assert any(e.deferred for e in graph.edges) and any(e.typing_only for e in graph.edges)
