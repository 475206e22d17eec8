"""Golden screen sequences: compare pixel-exactly, regenerate only on purpose."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from PIL import Image, ImageChops

GOLDEN = Path(__file__).parent / "golden"


def frame_problems(name: str, frames: list[Image.Image], root: Path = GOLDEN) -> list[str]:
    """Differences between a station's frames and ``<root>/<name>/NNNN.png``.

    With COFFRE_REGEN_GOLDEN=1 the files are rewritten and reported as a problem,
    so the test fails and a regenerated baseline is looked at before it is committed.
    """
    folder = root / name
    if os.environ.get("COFFRE_REGEN_GOLDEN") == "1":
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


def _bw(image: Image.Image) -> Image.Image:
    """Normalise to 0/255 greyscale (mode "1" images may hold 1 for white)."""
    return image.convert("L").point(lambda v: 255 if v else 0)
