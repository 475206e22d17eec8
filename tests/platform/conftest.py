"""Fixtures for whole-table tests (defined in tests.support.tables)."""

from __future__ import annotations

from tests.support.tables import _need_mosquitto, make_table

__all__ = ["_need_mosquitto", "make_table"]
