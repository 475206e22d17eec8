"""The clean-table run (deploy/e2e/clean-table.sh): from clean Debian Bookworm to a played
game, a hub and three stations on another port than a broker already on the hub, with only
the host's typed commands and one confirmation per station; then the hub is replaced from a
backup and a replaced station pairs for a second game. Root, debootstrap, nft and the
internet; about fifteen minutes: deselected unless ``COFFRE_E2E=1`` (``sudo COFFRE_E2E=1
.venv/bin/python -m pytest -s tests/platform/test_clean_table.py``)."""

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
def test_a_clean_table_pairs_plays_and_survives_a_new_hub() -> None:
    """Provisioning names the other broker on 8883 and the table runs on 8884 beside it;
    every station pairs with one confirmation and gets its files 0600; the bots play a
    whole game; a new hub restored from the backup takes a replaced station and plays a
    second one; the other broker still answers. The host typed 16 commands to the first
    game (4 clone, 5 provision, 4 systemctl start, 3 confirmations) and 10 more for the
    new hub and station (backup, clone, provision, restore, 2 systemctl, clone, provision,
    start, 1 confirmation), as the script counts them."""
    env = {**os.environ, "PYTHON": sys.executable}
    run = subprocess.run(
        ["bash", str(ROOT / "deploy" / "e2e" / "clean-table.sh")],
        capture_output=True, text=True, env=env, timeout=3500,
    )  # fmt: skip
    print(run.stdout[-6000:], run.stderr[-2000:])
    assert run.returncode == 0
    assert run.stdout.count("game over after") == 2
    assert "provision-pi: port 8883 is taken by mosquitto" in run.stdout
    assert "the other app's broker on 8883 after the game: answers" in run.stdout
    for station in ("p1", "p2", "p3", "p3b"):
        assert re.search(
            rf"{station}: /var/lib/coffre-station/station.password 600 coffre", run.stdout
        )
    done = re.search(r"(\d+) commands typed .* (\d+) pairing confirmations", run.stdout)
    assert done is not None and done.groups() == ("26", "3")
