"""The clean-table run (deploy/e2e/clean-table.sh): from clean Debian Bookworm to a played
game, a hub and three stations, with only the host's typed commands and one confirmation
per station. Root, debootstrap, nft and the internet; about ten minutes: deselected
unless ``COFFRE_E2E=1`` (``sudo COFFRE_E2E=1 .venv/bin/python -m pytest -s
tests/platform/test_clean_table.py``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.e2e
@pytest.mark.timeout(3600)
def test_a_clean_table_pairs_and_plays_with_the_host_typing_fifteen_commands() -> None:
    """Every machine provisions, every station pairs with one confirmation and gets its
    files 0600, the bots play a whole game, and the host typed 15 commands in all
    (4 clone, 4 provision, 4 systemctl start, 3 confirmations), as the script counts them."""
    env = {**os.environ, "PYTHON": sys.executable}
    run = subprocess.run(
        ["bash", str(ROOT / "deploy" / "e2e" / "clean-table.sh")],
        capture_output=True, text=True, env=env, timeout=3500,
    )  # fmt: skip
    print(run.stdout[-6000:], run.stderr[-2000:])
    assert run.returncode == 0
    assert "game over after" in run.stdout
    for station in ("p1", "p2", "p3"):
        assert re.search(
            rf"{station}: /var/lib/coffre-station/station.password 600 coffre", run.stdout
        )
    done = re.search(r"(\d+) commands typed .* (\d+) pairing confirmations", run.stdout)
    assert done is not None and done.groups() == ("15", "3")
