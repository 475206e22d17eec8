"""Red-team fixtures: the whole-table fixtures of tests/platform, reused."""

from __future__ import annotations

from tests.platform.conftest import _need_mosquitto, make_table

__all__ = ["_need_mosquitto", "make_table"]
