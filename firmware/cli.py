"""The ``coffre`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rules import GAME_IDS


def build_parser() -> argparse.ArgumentParser:
    """All subcommands and their options."""
    parser = argparse.ArgumentParser(prog="coffre", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    play = sub.add_parser("play", help="apply a JSON scenario to a rules engine")
    play.add_argument("--game", required=True, choices=GAME_IDS)
    play.add_argument("--players", type=int, required=True)
    play.add_argument("--seed", type=int, default=0)
    play.add_argument("--option", "-o", action="append", metavar="KEY=VALUE")
    play.add_argument("scenario", nargs="?", help="file of JSON actions, one a line (- = stdin)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; returns the process exit status."""
    args = build_parser().parse_args(argv)
    if args.command == "play":
        from firmware import play

        return play.main(args)
    return 1


if __name__ == "__main__":
    sys.exit(main())
