"""A seat on the hub display: its short colour and its number ("Red1", "Yel2"), so a host who
cannot tell red from green still finds the seat (seats from 9 on are already "S9")."""

from __future__ import annotations


def numbered(short: str, seat: int) -> str:
    """``short`` (the seat's three letters) with the seat's number, unless it has one."""
    return short if any(c.isdigit() for c in short) else f"{short}{seat + 1}"
