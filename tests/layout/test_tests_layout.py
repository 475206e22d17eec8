"""Test support lives in tests/support: no test imports another test module, one golden switch."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from tests.support.imports import import_statements, package_of

TESTS = Path(__file__).resolve().parents[1]
SUPPORT = "tests.support"
#: An environment lookup of the golden switch (only tests/support/golden.py may hold one).
_SWITCH_READ = re.compile(r"(environ|getenv)\b[^\n]*(COFFRE_REGEN_GOLDEN|REGEN_ENV)")


def _module_of(path: Path) -> str:
    """The dotted module name of a file under tests/ (``tests.rules.test_x``)."""
    parts = path.relative_to(TESTS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module) of every import in ``path``, nested ones and relative ones too;
    ``from tests.x import y`` yields ``tests.x.y`` as well (``y`` may be a module)."""
    module = _module_of(path)
    package = package_of(module, path.name == "__init__.py")
    for line, base, names in import_statements(path.read_text(encoding="utf-8"), package):
        yield line, base
        for name in names:
            yield line, f"{base}.{name}"


def _from_a_test_module(module: str, *, conftest_too: bool = False) -> bool:
    """True for a module under tests/ that is not support (nor a conftest, unless asked)."""
    if module != "tests" and not module.startswith("tests."):
        return False
    if module == SUPPORT or module.startswith(SUPPORT + "."):
        return False
    if module.split(".")[-1] == "conftest" and not conftest_too:
        return False
    return (TESTS.parent / (module.replace(".", "/") + ".py")).exists()


def _offences(paths: list[Path], *, conftest_too: bool = False) -> list[str]:
    """``file:line imports module`` for each import of a test module in ``paths``."""
    out = []
    for path in paths:
        for line, module in _imports(path):
            if _from_a_test_module(module, conftest_too=conftest_too):
                out.append(f"{path.relative_to(TESTS.parent)}:{line} imports {module}")
    return sorted(set(out))


def test_no_test_module_imports_another_test_module() -> None:
    """A test_*.py imports from tests.support (or a conftest), never from another test file."""
    offences = _offences(sorted(TESTS.rglob("test_*.py")))
    assert not offences, "move the helper into tests/support/:\n" + "\n".join(offences)


def test_support_imports_no_test_module() -> None:
    """tests/support stands alone: it never reaches back into a test file or a conftest."""
    offences = _offences(sorted((TESTS / "support").rglob("*.py")), conftest_too=True)
    assert not offences, "\n".join(offences)


def test_the_golden_switch_is_read_in_one_place() -> None:
    """COFFRE_REGEN_GOLDEN is read by tests/support/golden.py only; golden tests ask it."""
    switch = TESTS / "support" / "golden.py"
    readers = [
        f"{p.relative_to(TESTS.parent)}:{n}"
        for p in sorted(TESTS.rglob("*.py"))
        if p not in (switch, Path(__file__).resolve())
        for n, text in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if _SWITCH_READ.search(text)
    ]
    assert not readers, "use tests.support.golden.regenerating():\n" + "\n".join(readers)
    assert _SWITCH_READ.search(switch.read_text(encoding="utf-8"))


def test_the_layout_check_sees_a_test_import() -> None:
    """The checker flags ``from tests.rules.test_x import y`` and lets support and conftest by."""
    assert _from_a_test_module("tests.rules.test_secret_identity")
    assert _from_a_test_module("tests.rules.test_secret_identity.run") is False  # a name
    assert not _from_a_test_module("tests.support.tables")
    assert not _from_a_test_module("tests.platform.conftest")
    assert not _from_a_test_module("firmware.hub.service")
    assert _from_a_test_module("tests.platform.conftest", conftest_too=True)
