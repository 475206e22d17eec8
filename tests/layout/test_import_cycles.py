"""No import circle in the product: each module can be read knowing only what it imports.

The graph is built from the source with ``ast``: every import counts, at top level, inside
a function, under ``if TYPE_CHECKING:`` (a type-only circle is still two modules that
must be understood together), relative or absolute, and ``from pkg import module`` is an
edge to that module. A circle is a strongly connected component of more than one module
(Tarjan's algorithm), reported as the modules in it and one loop through them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

import pytest

from tests.support.imports import import_statements, module_of, package_of

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("rules", "device", "hardware", "firmware")

Graph = dict[str, set[str]]


def modules_under(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root``, by dotted name (a package by its own)."""
    return {
        module_of(path, root): path
        for package in packages
        for path in sorted((root / package).rglob("*.py"))
    }


def _known(name: str, modules: Mapping[str, Path]) -> str | None:
    """``name`` or its nearest enclosing module that is one of ``modules``."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, path: Path, modules: Mapping[str, Path]) -> set[str]:
    """The modules among ``modules`` that ``module`` (at ``path``) imports, wherever in
    the file: ``import a.b``, ``from a import b`` (the module ``a.b`` if it is one, else
    ``a``), relative imports, and ``importlib.import_module("a.b")`` with a literal."""
    package = package_of(module, path.name == "__init__.py")
    targets: set[str] = set()
    for _, base, names in import_statements(path.read_text(), package):
        wholes = [f"{base}.{name}" for name in names]
        for name in [w if w in modules else base for w in wholes] or [base]:
            target = _known(name, modules)
            if target is not None and target != module:
                targets.add(target)
    return targets


def import_graph(modules: Mapping[str, Path], leave_out: tuple[str, ...] = ()) -> Graph:
    """Module -> the modules it imports, without the modules under ``leave_out``."""

    def kept(name: str) -> bool:
        return not any(name == p or name.startswith(p + ".") for p in leave_out)

    return {
        name: {t for t in imports_of(name, path, modules) if kept(t)}
        for name, path in modules.items()
        if kept(name)
    }


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def loop_through(graph: Graph, circle: list[str]) -> list[str]:
    """One shortest way from the circle's first module back to itself, inside the circle."""
    start, members = circle[0], set(circle)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"{circle} is not a circle")


def describe(graph: Graph, circle: list[str]) -> str:
    """A circle in words: its modules, and one loop through them."""
    return (
        f"{len(circle)} modules import each other in a circle: {', '.join(circle)} "
        f"(e.g. {' -> '.join(loop_through(graph, circle))})"
    )


@cache
def product_graph() -> Graph:
    """The product's import graph (built once a run: the cases share it, none changes it)."""
    return import_graph(modules_under(ROOT, PACKAGES))


def areas() -> list[str]:
    """The product's areas: each top-level package, and each package and module of
    ``firmware`` (its roles)."""
    found = [p for p in PACKAGES if p != "firmware"]
    for path in sorted((ROOT / "firmware").iterdir()):
        if path.name.startswith(("_", ".")):
            continue
        if (path / "__init__.py").is_file() or path.suffix == ".py":
            found.append(f"firmware.{path.stem}")
    return found


@pytest.mark.parametrize("area", areas())
def test_no_import_circle_touches_the_area(area: str) -> None:
    """No module of this area is in an import circle (TYPE_CHECKING imports included)."""
    graph = product_graph()
    assert any(m == area or m.startswith(area + ".") for m in graph), f"{area} has no modules"
    touching = [
        describe(graph, c)
        for c in circles(graph)
        if any(m == area or m.startswith(area + ".") for m in c)
    ]
    assert touching == []


def test_the_graph_holds_the_product() -> None:
    """The walk found the tree and its imports (a broken walk would find no circle)."""
    graph = product_graph()
    assert len(graph) > 50
    assert {"rules.core", "rules.declare"} <= graph["rules"]
    assert "firmware.link.protocol" in graph["firmware.link.mqtt"]


def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for name, source in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return modules_under(tmp_path, ["pkg"])


def test_a_circle_through_type_checking_and_a_function_is_found(tmp_path: Path) -> None:
    """``a`` imports ``b`` only for its types, ``b`` imports ``a`` only inside a function
    and relatively, ``c`` imports ``b`` plainly: ``a`` and ``b`` are a circle, named in
    words; ``c`` is not in it."""
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import b\n"
            ),
            "pkg/b.py": "def f():\n    from . import a\n    return a\n",
            "pkg/c.py": "import pkg.b\n",
        },
    )
    graph = import_graph(modules)
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.a"}
    assert circles(graph) == [["pkg.a", "pkg.b"]]
    assert describe(graph, ["pkg.a", "pkg.b"]) == (
        "2 modules import each other in a circle: pkg.a, pkg.b (e.g. pkg.a -> pkg.b -> pkg.a)"
    )


def test_a_longer_circle_through_names_and_a_package_is_found(tmp_path: Path) -> None:
    """``from pkg.sub.x import name`` is an edge to ``pkg.sub.x``, ``from .. import y`` to
    ``pkg.y``, a name of a package's ``__init__`` to the package: x -> y -> pkg.sub -> x."""
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/sub/__init__.py": "from .x import thing\n",
            "pkg/sub/x.py": "from .. import y\nthing = 1\n",
            "pkg/y.py": "from pkg.sub import thing\n",
            "pkg/z.py": "from pkg.sub.x import thing\n",
        },
    )
    graph = import_graph(modules)
    assert circles(graph) == [["pkg.sub", "pkg.sub.x", "pkg.y"]]
    assert "pkg.sub -> pkg.sub.x -> pkg.y -> pkg.sub" in describe(graph, circles(graph)[0])


def test_no_circle_is_found_where_imports_point_one_way(tmp_path: Path) -> None:
    """A chain and a diamond are no circle; a module left out takes its edges with it."""
    modules = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg import b, c\n",
            "pkg/b.py": "from pkg import d\n",
            "pkg/c.py": "import pkg.d\n",
            "pkg/d.py": "import os\n",
            "pkg/e/__init__.py": "from pkg import a\n",
            "pkg/e/f.py": "",
        },
    )
    assert circles(import_graph(modules)) == []
    (tmp_path / "pkg/d.py").write_text("from pkg.e import f\nfrom pkg import e\n")
    assert circles(import_graph(modules)) == [["pkg.a", "pkg.b", "pkg.c", "pkg.d", "pkg.e"]]
    assert circles(import_graph(modules, leave_out=("pkg.e",))) == []


HUB = "firmware.hub"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def drawn_layers(text: str) -> list[list[str]]:
    """The hub's layers as docs/architecture.md draws them, top first: the code block after
    "The hub's modules, in layers", one line of module names each (a description follows a
    ``|``; a line with no name continues the one above)."""
    after = text.split("**The hub's modules, in layers.**", 1)[1]
    block = after.split("```", 2)[1]
    layers = []
    for row in block.splitlines():
        names = row.partition("|")[0].split()
        if names:
            layers.append(names)
    return layers


def against_the_drawing(graph: Graph, layers: list[list[str]]) -> list[str]:
    """Each hub import that does not go down the drawing, and each hub module (or
    package) not drawn exactly once, in words."""

    def part(module: str) -> str | None:
        prefix = HUB + "."
        return module[len(prefix) :].split(".")[0] if module.startswith(prefix) else None

    level: dict[str, int] = {}
    wrong = []
    for depth, names in enumerate(layers):
        for name in names:
            if name in level:
                wrong.append(f"{name} is drawn twice")
            level[name] = depth
    parts = {p for m in graph if (p := part(m)) is not None}
    wrong += [f"{p} is not drawn" for p in sorted(parts - level.keys())]
    wrong += [f"{p} is drawn but is no module of the hub" for p in sorted(level.keys() - parts)]
    for module, targets in sorted(graph.items()):
        here = part(module)
        for target in sorted(targets):
            there = part(target)
            if here is None or there is None or here == there:
                continue
            if here in level and there in level and level[there] <= level[here]:
                wrong.append(f"{here} imports {there}, drawn on its line or above it")
    return wrong


def test_the_architecture_page_draws_the_hub_as_it_is() -> None:
    """Every module of the hub is on one line of docs/architecture.md's drawing, and
    imports only from the lines under its own."""
    layers = drawn_layers(ARCHITECTURE.read_text())
    assert layers[1][0] == "service"  # the top, under the programs that run it
    assert against_the_drawing(product_graph(), layers) == []


def test_the_drawing_check_sees_an_import_going_up() -> None:
    """A hub module importing one drawn above it, or one left out of the drawing, is named."""
    graph: Graph = {
        "firmware.hub": set(),
        "firmware.hub.top": {"firmware.hub.low", "firmware.hub.bindings"},
        "firmware.hub.low": set(),
        "firmware.hub.bindings": set(),
        "firmware.hub.bindings.x": {"firmware.hub.bindings", "firmware.hub.low"},
    }
    assert against_the_drawing(graph, [["top"], ["bindings"], ["low"]]) == []
    graph["firmware.hub.low"] = {"firmware.hub.top"}
    assert against_the_drawing(graph, [["top"], ["bindings"], ["low"]]) == [
        "low imports top, drawn on its line or above it"
    ]
    assert against_the_drawing(graph, [["top", "top"], ["low"]]) == [
        "top is drawn twice",
        "bindings is not drawn",
        "low imports top, drawn on its line or above it",
    ]
