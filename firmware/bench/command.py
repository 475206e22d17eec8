"""``coffre bench``: the mode its options pick, and options that mean nothing without it."""

from __future__ import annotations

import sys
from typing import Any

from firmware.bench import load, pi_class, tap
from firmware.bench.pi_zero_model import I2C_HZ


def main(args: Any) -> int:
    """Run the mode the options pick: ``--pi-class``, load (``--tables``) or tap."""
    if getattr(args, "pi_class", False):
        return pi_class.report(args)
    pi_class_only = [
        option
        for option, dest, default in (("--runs", "runs", 1), ("--i2c-hz", "i2c_hz", I2C_HZ))
        if getattr(args, dest, default) != default
    ]
    if pi_class_only:
        verb = "work" if len(pi_class_only) > 1 else "works"
        options = " and ".join(pi_class_only)
        print(f"coffre: bench: {options} {verb} only with --pi-class", file=sys.stderr)
        return 2
    if args.tables:
        return load.report(args)
    tap.report(args.stations, args.taps)
    return 0
