"""Update latency of the table display, measured in the browser (printed, never asserted)."""

from __future__ import annotations

from pathlib import Path

from tests.support.browser import display_latency


def test_every_update_of_eight_tables_reaches_its_page_and_latency_is_printed(
    tmp_path: Path,
) -> None:
    """8 tables on one display: each page reaches its last version, 90 % of versions show."""
    result = display_latency(tmp_path, tables=8, updates=160)
    print(
        f"\ntable display, 8 tables: {result['seen']:.0f} updates, publish->DOM "
        f"p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms, "
        f"max {result['max_ms']:.1f} ms"
    )
    # A slow browser may skip straight to the newest state, but never loses the last one,
    # and on an idle table every update shows.
    assert result["seen"] >= 0.9 * result["updates"]
