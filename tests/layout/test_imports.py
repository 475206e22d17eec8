"""The tree says who runs what: imports point one way, and vendor drivers stay in device/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.imports import import_statements, module_of, package_of

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("firmware", "device", "rules", "hardware")

#: Package prefix -> what its modules must never import (prefixes of module names).
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "rules": ("firmware", "device", "hardware"),
    "hardware": ("firmware", "device", "rules"),
    "device": ("firmware", "rules"),
    "firmware.link": (
        "firmware.hub",
        "firmware.station",
        "firmware.tools",
        "firmware.bench",
        "firmware.cli",
        "rules",
        "device",
        "hardware",
    ),
    "firmware.station": (
        "firmware.hub",
        "firmware.tools",
        "firmware.bench",
        "firmware.cli",
        "rules",
    ),
    # The hub's service is its top: the loop and the wiring; its handlers and the rest of
    # the hub sit below it and are handed what they use (firmware/hub/context.py).
    "firmware.hub": (
        "firmware.station",
        "firmware.tools",
        "firmware.bench",
        "firmware.cli",
        "firmware.hub.service",
    ),
    "firmware.tools": ("firmware.bench", "firmware.cli"),
    "firmware.bench": ("firmware.cli",),
    # The table display shows only what the hub made public: it never holds the rules.
    "firmware.display": (
        "firmware.hub",
        "firmware.station",
        "firmware.tools",
        "firmware.bench",
        "firmware.cli",
        "rules",
        "device",
    ),
}

#: Vendor hardware libraries (they raise or need a Pi at import) and where they may appear.
VENDOR = ("RPi", "spidev", "smbus2", "mfrc522", "lgpio", "luma.oled.device", "luma.core.interface")
VENDOR_HOMES = ("device.real_reader", "device.real_display")


def imported(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module a source imports: at top level, inside functions, or by literal name
    through ``importlib.import_module``; ``from a import b`` counts ``a`` and ``a.b``."""
    found: set[str] = set()
    for _, base, names in import_statements(source, package_of(module, is_package)):
        found.add(base)
        found.update(f"{base}.{name}" for name in names)
    return found


def under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


#: The hub's program sits above its service: it builds the service and runs it.
HUB_PROGRAM = "firmware.hub.run_hub"
HUB_SERVICE = "firmware.hub.service"


def violations(module: str, source: str, is_package: bool = False) -> list[str]:
    """What ``module`` imports that its layer forbids, one line each."""
    bad = []
    names = imported(source, module, is_package)
    for layer, banned in FORBIDDEN.items():
        if not under(module, layer):
            continue
        for name in sorted(names):
            if module == HUB_PROGRAM and under(name, HUB_SERVICE):
                continue
            if any(under(name, b) for b in banned):
                bad.append(f"{module} imports {name} ({layer} must not)")
    if not any(under(module, home) for home in VENDOR_HOMES):
        for name in sorted(names):
            if any(under(name, v) for v in VENDOR):
                bad.append(f"{module} imports vendor {name} (only in device's real backends)")
    return bad


def all_modules() -> list[tuple[str, str, bool]]:
    """(module, source, is it a package's ``__init__``) for every product module."""
    return [
        (module_of(path, ROOT), path.read_text(), path.name == "__init__.py")
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    ]


def test_the_tree_has_the_role_packages() -> None:
    """firmware/ is split by who runs it, each package saying so in its docstring."""
    for package in ("link", "hub", "station", "tools", "bench", "display"):
        init = ROOT / "firmware" / package / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert "Run by:" in doc and ("May import" in doc), package


def test_imports_point_one_way() -> None:
    """No module imports against the layering (station never the hub, link neither, ...)."""
    modules = all_modules()
    assert len(modules) > 50  # the walk found the tree
    bad = [line for module, src, pkg in modules for line in violations(module, src, pkg)]
    assert bad == []


def test_no_hub_module_imports_the_service() -> None:
    """The hub's service is the top of the hub: no other module of it imports it, not even
    for a type (its handlers take a HubContext, firmware/hub/context.py), but the program
    that builds and runs it (firmware/hub/run_hub.py)."""
    hub = [(m, src, pkg) for m, src, pkg in all_modules() if under(m, "firmware.hub")]
    assert len(hub) > 20  # the walk found the hub
    bad = [
        f"{module} imports {name}"
        for module, source, is_package in hub
        if module not in (HUB_SERVICE, HUB_PROGRAM)
        for name in sorted(imported(source, module, is_package))
        if under(name, "firmware.hub.service")
    ]
    assert bad == []


@pytest.mark.parametrize(
    ("module", "line"),
    [
        ("firmware.station.service", "from firmware.hub.service import Hub"),
        ("firmware.station.selftest", "def f():\n    from firmware.hub import table"),
        ("firmware.station.keylearn", "import rules.core"),
        ("firmware.link.mqtt", "from firmware.station.config import load_station"),
        ("firmware.link.protocol", "from . import render\nfrom ..hub import store"),
        ("rules.core", "from firmware.link import protocol"),
        ("firmware.hub.service", "importlib.import_module('firmware.tools.sim')"),
        ("firmware.station.service", "import spidev"),
        ("device.gpio", "from mfrc522 import MFRC522"),
        ("firmware.display.render", "from rules import get_game"),
        ("firmware.display.spectator", "from firmware.hub.table import Table"),
        ("firmware.hub.moves", "from firmware.hub.service import Hub"),
        ("firmware.hub.inputs", "if TYPE_CHECKING:\n    from firmware.hub import service"),
        ("firmware.hub.context", "from .service import Hub"),
    ],
)
def test_the_check_catches_a_wrong_import(module: str, line: str) -> None:
    """Adding a forbidden import to a real module's source makes the check fail."""
    path = ROOT / Path(*module.split(".")).with_suffix(".py")
    source = path.read_text() if path.exists() else ""
    assert violations(module, source) == []
    assert violations(module, source + "\n" + line + "\n") != []
