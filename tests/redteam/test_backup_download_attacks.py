"""Attacks on the console's sealed backups from the venue's Wi-Fi (docs/host-guide.md's
threat model): downloading without a session or with a revoked one, from another site,
choosing another file (a name in the request, a ``../``, a link planted in the folder), and
asking for backups from another site. The console's real routes on aiohttp's real server;
the hub records the host commands reaching it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from firmware.display.console import SESSION_COOKIE
from firmware.display.spectator import Snapshot
from firmware.link import protocol as proto
from tests.support.console_rig import TABLE, Rig, fields, origin, run, sign_in, write


def _folder(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A backup folder with an older and a newer sealed archive; a secret beside it."""
    folder = tmp_path / "backups"
    folder.mkdir()
    older, newer = folder / "coffre-backup-hub-1.sealed", folder / "coffre-backup-hub-2.sealed"
    older.write_bytes(b"coffre-sealed-1\nolder" + os.urandom(64))
    newer.write_bytes(b"coffre-sealed-1\nnewer" + os.urandom(64))
    os.utime(older, (1_000_000, 1_000_000))
    os.utime(newer, (2_000_000, 2_000_000))
    secret = tmp_path / "hub.password"
    secret.write_text("the hub's broker password\n")
    return folder, newer, secret


def test_only_a_session_downloads_the_newest_sealed_backup(tmp_path: Path) -> None:
    """No session, a made-up cookie, a revoked one: 401 and not a byte. The host's session:
    the newest sealed archive as an attachment, never cached."""
    folder, newer, _secret = _folder(tmp_path)

    async def attack(rig: Rig) -> None:
        console, _hub, _clock, browser = rig
        console.backups = folder
        stranger = await browser()
        response = await stranger.get(f"/host/{TABLE}/backup")
        assert response.status == 401 and b"newer" not in await response.read()
        stranger.session.cookie_jar.update_cookies({SESSION_COOKIE: "x" * 43})
        assert (await stranger.get(f"/host/{TABLE}/backup")).status == 401
        host = await browser()
        csrf = await sign_in(rig, host)
        response = await host.get(f"/host/{TABLE}/backup")
        assert response.status == 200
        assert await response.read() == newer.read_bytes()
        assert response.headers["Content-Disposition"] == f'attachment; filename="{newer.name}"'
        assert response.headers["Cache-Control"] == "no-store"
        assert response.headers["Content-Type"] == "application/octet-stream"
        # A thief with the host's cookie, once the host ended that session: 401.
        token = host.session.cookie_jar.filter_cookies(host.make_url(f"/host/{TABLE}"))
        thief = await browser()
        thief.session.cookie_jar.update_cookies({SESSION_COOKIE: token[SESSION_COOKIE].value})
        assert (await thief.get(f"/host/{TABLE}/backup")).status == 200
        page = await (await host.get(f"/host/{TABLE}")).text()
        (session_id,) = re.findall(r'data-session="([^"]+)"', page)
        status, _ = await write(host, "revoke", fields(csrf, session=session_id), origin(host))
        assert status == 200
        response = await thief.get(f"/host/{TABLE}/backup")
        assert response.status == 401 and b"newer" not in await response.read()

    run(attack)


def test_no_request_chooses_another_file(tmp_path: Path) -> None:
    """A name in the query, a ``../`` in the path, a link planted in the folder (newest of
    all, to the hub's password) or a planted folder: the newest plain sealed file is
    served, or nothing."""
    folder, newer, secret = _folder(tmp_path)

    async def attack(rig: Rig) -> None:
        console, _hub, _clock, browser = rig
        console.backups = folder
        host = await browser()
        await sign_in(rig, host)
        for path in (
            f"/host/{TABLE}/backup?name=../hub.password",
            f"/host/{TABLE}/backup?file=coffre-backup-hub-1.sealed",
        ):
            response = await host.get(path)
            assert response.status == 200 and await response.read() == newer.read_bytes()
        for path in (
            f"/host/{TABLE}/backup/../../hub.password",
            f"/host/{TABLE}/backup/coffre-backup-hub-1.sealed",
            f"/host/{TABLE}/backup/%2e%2e%2fhub.password",
        ):
            response = await host.get(path)
            assert b"broker password" not in await response.read(), path
        planted = folder / "coffre-backup-hub-9.sealed"
        planted.symlink_to(secret)
        os.utime(planted, (3_000_000, 3_000_000), follow_symlinks=False)
        (folder / "coffre-backup-hub-8.sealed").mkdir()
        response = await host.get(f"/host/{TABLE}/backup")
        assert response.status == 200 and await response.read() == newer.read_bytes()
        for archive in folder.glob("coffre-backup-hub-[12].sealed"):
            archive.unlink()
        response = await host.get(f"/host/{TABLE}/backup")
        assert response.status == 404 and b"broker password" not in await response.read()
        console.backups = None  # a display without [console] backups serves none
        assert (await host.get(f"/host/{TABLE}/backup")).status == 404

    run(attack)


def test_another_site_neither_downloads_nor_asks(tmp_path: Path) -> None:
    """A page on another site the host opens: its fetch of the download (the browser says
    so: ``Sec-Fetch-Site``, ``Origin``) is refused, and its POST of ``backup`` reaches no
    hub; the console's own button does."""
    folder, newer, _secret = _folder(tmp_path)

    async def attack(rig: Rig) -> None:
        console, hub, _clock, browser = rig
        console.backups = folder
        host = await browser()
        csrf = await sign_in(rig, host)
        for headers in (
            {"Sec-Fetch-Site": "cross-site"},
            {"Sec-Fetch-Site": "same-site"},
            {"Origin": "http://evil.example"},
        ):
            response = await host.get(f"/host/{TABLE}/backup", headers=headers)
            assert response.status == 403, headers
            assert newer.read_bytes() not in await response.read()
        for headers in ({"Origin": "http://evil.example"}, {}):
            status, _ = await write(host, "command", fields(csrf, cmd="backup"), headers)
            assert status == 403
        assert hub.commands == []
        status, _ = await write(host, "command", fields(csrf, cmd="backup"), origin(host))
        assert status == 200
        assert [c.cmd for c in hub.commands] == ["backup"]

    run(attack)


def test_the_page_offers_the_download_once_the_hub_says_a_sealed_one_is_there(
    tmp_path: Path,
) -> None:
    """The care part: a button that asks, the key's warning, and the download only when
    the hub's status names a sealed backup (a plain one from the terminal is not served)."""
    folder, _newer, _secret = _folder(tmp_path)
    status: dict[str, object] = {"state": "ready", "backup": None}

    async def attack(rig: Rig) -> None:
        console, _hub, _clock, browser = rig
        console.backups = folder
        console.snapshot = lambda table: Snapshot(table, status=status, broker=True)
        host = await browser()
        await sign_in(rig, host)

        async def download_shown() -> bool:
            page = await (await host.get(f"/host/{TABLE}")).text()
            assert 'data-cmd="backup"' in page and "its key shows on the hub" in page
            (tag,) = re.findall(r'<p id="download"[^>]*>', page)
            live = await (await host.get(f"/host/{TABLE}/live")).text()
            (now,) = re.findall(r'<span id="table-now"[^>]*>', live)
            assert ("data-backup=" not in now) == ("hidden" in tag)
            return "hidden" not in tag

        assert not await download_shown()
        for stamp in (  # as the hub's status carries them
            proto.BackupStamp(at=1, name="coffre-hub.tar.gz", size=10),
            proto.BackupStamp(at=2, name="coffre-backup-hub-2.sealed", size=80, sealed=True),
        ):
            status["backup"] = json.loads(proto.encode(stamp))
            assert await download_shown() == stamp.sealed

    run(attack)
