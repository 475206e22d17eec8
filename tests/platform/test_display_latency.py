"""Update latency of the table display, measured in the browser (printed, never asserted),
and how many updates reach the page."""

from __future__ import annotations

from pathlib import Path

from tests.support.browser import display_latency

TABLES = 8


def test_every_update_of_eight_tables_reaches_its_page_and_latency_is_printed(
    tmp_path: Path,
) -> None:
    """8 tables on one display: each page reaches its last version (``display_latency``
    waits for it) and shows most of the versions on the way; the numbers are printed."""
    result = display_latency(tmp_path, tables=TABLES, updates=160)
    print(
        f"\ntable display, 8 tables: {result['seen']:.0f} of {result['updates']} updates shown, "
        "publish->DOM "
        f"p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms, "
        f"max {result['max_ms']:.1f} ms; type fitted {result['fits']:.0f} times, "
        f"kept {result['kept']:.0f} times"
    )
    # A page draws the newest of the updates that landed while it was busy: it may skip a
    # state under load, never the last one (display_latency waits for it). It keeps up
    # because it keeps its type from one update to the next and fits it anew only when the
    # page overflows or shrank: a page that fitted at every update drew about one in three.
    # How many it shows depends on the machine's load; which of those it fits anew does not.
    # Each page may fit twice besides: at its first game update (the idle page's type) and
    # once its updates stop; every other update it draws mostly keeps the type.
    assert result["kept"] > result["fits"] - 2 * TABLES, result
