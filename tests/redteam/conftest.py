"""Red-team fixtures: the whole-table fixtures of tests.support.tables."""

from __future__ import annotations

from tests.support.tables import _need_mosquitto, make_table

__all__ = ["_need_mosquitto", "make_table"]
