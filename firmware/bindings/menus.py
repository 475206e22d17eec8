"""Pieces shared by the bindings whose choices are knob menus."""

from __future__ import annotations

from typing import Any


class Option:
    """One menu entry: a label and the table event a press on it means."""

    __slots__ = ("body", "label")

    def __init__(self, label: str, body: dict[str, Any]) -> None:
        self.label = label
        self.body = body
