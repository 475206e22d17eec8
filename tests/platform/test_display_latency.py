"""Update latency of the table display, measured in the browser (printed, never asserted),
and how many updates reach the page."""

from __future__ import annotations

from pathlib import Path

from tests.support.browser import display_latency


def test_every_update_of_eight_tables_reaches_its_page_and_latency_is_printed(
    tmp_path: Path,
) -> None:
    """8 tables on one display: each page reaches its last version (``display_latency``
    waits for it) and shows most of the versions on the way; the numbers are printed."""
    result = display_latency(tmp_path, tables=8, updates=160)
    print(
        f"\ntable display, 8 tables: {result['seen']:.0f} of {result['updates']} updates shown, "
        "publish->DOM "
        f"p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms, "
        f"max {result['max_ms']:.1f} ms"
    )
    # A page draws the newest of the updates that landed while it was busy: it may skip a
    # state under load, never the last one, and it keeps up with most of them (a page that
    # fits its type anew at every update draws about one in three).
    assert result["seen"] > result["updates"] / 2
