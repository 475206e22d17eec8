"""Update latency of the table display, measured in the browser (printed, never asserted)."""

from __future__ import annotations

from pathlib import Path

from tests.support.browser import display_latency


def test_every_update_of_eight_tables_reaches_its_page_and_latency_is_printed(
    tmp_path: Path,
) -> None:
    """8 tables on one display: each page reaches its last version (``display_latency``
    waits for it); how many versions showed is printed."""
    result = display_latency(tmp_path, tables=8, updates=160)
    print(
        f"\ntable display, 8 tables: {result['seen']:.0f} of {result['updates']} updates shown, "
        "publish->DOM "
        f"p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms, "
        f"max {result['max_ms']:.1f} ms"
    )
    # A page draws the newest of the updates that arrived while it was fitting the type to
    # the screen (several layouts an update): it may skip states, never the last one.
    assert result["seen"] >= 8
