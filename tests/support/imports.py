"""Every import statement of a Python source, read with ``ast`` (never executed): the one
walker the layout tests share (layers, import circles, test support)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path


def module_of(path: Path, root: Path) -> str:
    """The dotted name of the module at ``path`` under ``root`` (a package by its own)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(module: str, is_package: bool) -> str:
    """The package a relative import in ``module`` starts from: itself for a package's
    ``__init__``, else the package holding it."""
    return module if is_package else module.rpartition(".")[0]


def import_statements(source: str, package: str) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names) for each import in ``source``, wherever it is: at top level,
    in a function, under ``if TYPE_CHECKING:``. ``import a.b`` gives ("a.b", ()); ``from a
    import b, c`` gives ("a", ("b", "c")), a relative one resolved against ``package``;
    ``importlib.import_module("a.b")`` with a literal gives ("a.b", ())."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = parts[: len(parts) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield node.lineno, base, tuple(alias.name for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.lineno, node.args[0].value, ()
