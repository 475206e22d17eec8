"""How much CPU a Zero 2 W's or a Pi 4's Python gets, as a share of one core here, and the
cgroup CPU quotas that hold the Pi-class run's processes to it.

The share is calibrated at each run: the same n-body loop is timed here and set against
the boards' own figures (how they were derived: ``docs/benchmarks.md``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

#: The CPU time of the calibration loop (n-body, 200,000 steps) on each board, as a
#: share of this machine is computed at run time; these are the boards' own figures.
#: Pi 4 (Cortex-A72, 1.5 GHz): 5,000,000 n-body steps in 158.3 s of Python (docs/benchmarks.md).
PI4_NBODY_S_PER_STEP = 158.3 / 5_000_000
#: Zero 2 W (Cortex-A53, 1 GHz) against a Pi 4: 0.33 (single-core sysbench per clock,
#: A53 / A72, times 1.0 / 1.5 GHz; docs/benchmarks.md).
ZERO_VS_PI4 = 0.33
CALIBRATION_STEPS = 200_000


def nbody_seconds(steps: int = CALIBRATION_STEPS) -> float:
    """CPU seconds of ``steps`` steps of the benchmarks game's n-body (Python #1) here."""
    bodies = [
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 39.47841760435743),
        ([4.84, -1.16, -0.10], [0.61, 2.81, -0.03], 0.037693674870389),
        ([8.34, 4.12, -0.40], [-1.01, 1.83, 0.01], 0.011286326131968),
        ([12.89, -15.11, -0.22], [1.08, 0.87, -0.01], 0.0017237240570597),
        ([15.38, -25.92, 0.18], [0.98, 0.59, -0.03], 0.0020336868699246),
    ]
    pairs = [(bodies[i], b) for i in range(len(bodies)) for b in bodies[i + 1 :]]
    dt = 0.01
    start = time.process_time()
    for _ in range(steps):
        for ([x1, y1, z1], v1, m1), ([x2, y2, z2], v2, m2) in pairs:
            dx, dy, dz = x1 - x2, y1 - y2, z1 - z2
            mag = dt * ((dx * dx + dy * dy + dz * dz) ** (-1.5))
            b1m, b2m = m1 * mag, m2 * mag
            v1[0] -= dx * b2m
            v1[1] -= dy * b2m
            v1[2] -= dz * b2m
            v2[0] += dx * b1m
            v2[1] += dy * b1m
            v2[2] += dz * b1m
        for r, [vx, vy, vz], _m in bodies:
            r[0] += dt * vx
            r[1] += dt * vy
            r[2] += dt * vz
    return time.process_time() - start


@dataclass
class Shares:
    """The share of one of this machine's cores that each board's Python gets."""

    pi4: float
    zero: float
    here_s: float = 0.0  # the calibration loop's CPU time here

    @classmethod
    def calibrate(cls) -> Shares:
        here = nbody_seconds()
        pi4 = min(1.0, here / (PI4_NBODY_S_PER_STEP * CALIBRATION_STEPS))
        return cls(pi4, pi4 * ZERO_VS_PI4, here)


# --- cgroup CPU quotas -----------------------------------------------------------------------


class Cgroups:
    """CPU-quota groups for the bench's processes, made and removed by the bench."""

    V2 = Path("/sys/fs/cgroup")
    V1 = Path("/sys/fs/cgroup/cpu")

    def __init__(self) -> None:
        self.made: list[Path] = []
        self.kind = self._probe()

    def _probe(self) -> str | None:
        if os.geteuid() != 0:
            return None
        if (self.V2 / "cgroup.controllers").is_file():
            controllers = (self.V2 / "cgroup.controllers").read_text().split()
            return "v2" if "cpu" in controllers else None
        if (self.V1 / "cpu.cfs_quota_us").is_file():
            return "v1"
        return None

    def group(self, name: str, share: float) -> Path:
        """A group whose processes together get ``share`` of one core (1 ms slices at least:
        the kernel's smallest quota)."""
        assert self.kind is not None
        quota = 1000
        period = max(1000, min(1_000_000, round(quota / share)))
        base = self.V2 if self.kind == "v2" else self.V1
        path = base / f"coffre-bench-{os.getpid()}-{name}"
        path.mkdir(exist_ok=True)
        self.made.append(path)
        if self.kind == "v2":
            (path / "cpu.max").write_text(f"{quota} {period}\n")
        else:
            (path / "cpu.cfs_period_us").write_text(f"{period}\n")
            (path / "cpu.cfs_quota_us").write_text(f"{quota}\n")
        return path

    def chips(self) -> Path | None:
        """The ``tasks`` file of a group without a quota, for single threads (cgroup v1
        moves threads one by one; v2 only within a threaded subtree: not done, None)."""
        if self.kind != "v1":
            return None
        path = self.V1 / f"coffre-bench-{os.getpid()}-chips"
        path.mkdir(exist_ok=True)
        self.made.append(path)
        (path / "cpu.cfs_quota_us").write_text("-1\n")
        return path / "tasks"

    @staticmethod
    def enter(path: Path, pid: int) -> None:
        (path / "cgroup.procs").write_text(f"{pid}\n")

    def remove(self) -> None:
        """Remove the groups (their processes have ended: a group with members stays)."""
        for path in reversed(self.made):
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
        self.made.clear()
