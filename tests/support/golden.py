"""Goldens: the one switch that regenerates them, and the picture comparisons.

``COFFRE_REGEN_GOLDEN=1`` is read here and nowhere else. A golden test that sees
``regenerating()`` rewrites its file and then fails, so a regenerated baseline is
always looked at before it is committed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from PIL import Image, ImageChops

#: The environment variable that makes every golden test rewrite its golden and fail.
REGEN_ENV = "COFFRE_REGEN_GOLDEN"

TESTS = Path(__file__).resolve().parent.parent
#: Station screen sequences of whole-table games (mock displays; the HIL glass matches them).
STATION_GOLDEN = TESTS / "platform" / "golden"
#: Table display pictures (headless Chromium screenshots).
DISPLAY_GOLDEN = STATION_GOLDEN / "display"


def regenerating() -> bool:
    """True when the run was asked to rewrite the goldens (COFFRE_REGEN_GOLDEN=1)."""
    return os.environ.get(REGEN_ENV) == "1"


def frame_problems(name: str, frames: list[Image.Image], root: Path = STATION_GOLDEN) -> list[str]:
    """Differences between a station's frames and ``<root>/<name>/NNNN.png``.

    With COFFRE_REGEN_GOLDEN=1 the files are rewritten and reported as a problem,
    so the test fails and a regenerated baseline is looked at before it is committed.
    """
    folder = root / name
    if regenerating():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for i, frame in enumerate(frames):
            _bw(frame).convert("1").save(folder / f"{i:04d}.png")
        return [f"regenerated {len(frames)} golden screens in {folder}: review, then rerun"]
    expected = sorted(folder.glob("*.png"))
    if not expected:
        return [f"no golden screens in {folder} (run with COFFRE_REGEN_GOLDEN=1)"]
    for i, (path, frame) in enumerate(zip(expected, frames, strict=False)):
        with Image.open(path) as want:
            diff = ImageChops.difference(_bw(want), _bw(frame)).getbbox()
        if diff is not None:
            return [f"{name}: screen {i} differs from {path.name} in box {diff}"]
    if len(frames) != len(expected):
        return [f"{name}: {len(frames)} screens, golden has {len(expected)}"]
    return []


def glass_mismatches(name: str, frames: list[Image.Image]) -> list[str]:
    """Differences between emulated glass frames and ``STATION_GOLDEN/<name>/NNNN.png``
    (every differing screen; the HIL suite never regenerates: the mock displays own them)."""
    folder = STATION_GOLDEN / name
    expected = sorted(folder.glob("*.png"))
    if not expected:
        return [f"no golden screens in {folder}"]
    problems = []
    for i, (path, frame) in enumerate(zip(expected, frames, strict=False)):
        with Image.open(path) as want:
            if want.convert("1").tobytes() != frame.convert("1").tobytes():
                problems.append(f"{name}: screen {i} differs from {path.name}")
    if len(frames) != len(expected):
        problems.append(f"{name}: {len(frames)} screens, golden has {len(expected)}")
    return problems


def picture_problems(name: str, image: Image.Image, root: Path = DISPLAY_GOLDEN) -> list[str]:
    """Differences from ``<root>/<name>.png``; COFFRE_REGEN_GOLDEN=1 rewrites it
    (and fails, so a regenerated picture is looked at before it is committed)."""
    path = root / f"{name}.png"
    if regenerating():
        root.mkdir(parents=True, exist_ok=True)
        image.save(path)
        return [f"regenerated {path}: look at it, then rerun"]
    if not path.exists():
        return [f"no golden picture {path} (run with COFFRE_REGEN_GOLDEN=1)"]
    with Image.open(path) as want:
        if want.size != image.size:
            return [f"{name}: size {image.size}, golden {want.size}"]
        box = ImageChops.difference(want.convert("RGB"), image).getbbox()
    return [] if box is None else [f"{name}: differs from the golden picture in box {box}"]


def _bw(image: Image.Image) -> Image.Image:
    """Normalise to 0/255 greyscale (mode "1" images may hold 1 for white)."""
    return image.convert("L").point(lambda v: 255 if v else 0)
