"""Where a phone opens a table's page, and that address as a QR code.

The idle page shows its own address and a QR code of it, so a guest points a phone at the
TV and follows the table. The address is display.toml's ``[http] address`` when the host
wrote one, else this machine's address on the network that reaches the broker (the venue's
Wi-Fi), found once at start. The QR code is drawn here (segno, pure Python) as an inline
SVG: the page loads nothing from anywhere else.
"""

from __future__ import annotations

import ipaddress
import socket
from functools import lru_cache

import segno


def own_address(toward: str, port: int, host: str = "0.0.0.0") -> str:
    """``http://<this machine's address>:<port>/`` as a phone on the venue's network reaches
    it: the interface that routes to ``toward`` (the broker's host; no packet is sent), or
    the listening ``host`` when it is one address. Empty when only a loopback is known (a
    phone could not open it)."""
    found = host if host not in ("0.0.0.0", "", "::") else ""
    if not found:
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect((toward, 9))  # a UDP "connect" only picks the route
                found = str(probe.getsockname()[0])
        except OSError:
            return ""
    try:
        if ipaddress.ip_address(found).is_loopback:
            return ""
    except ValueError:
        pass  # a host name: as it is
    return f"http://{found}:{port}/"


@lru_cache(maxsize=64)
def qr_svg(text: str) -> str:
    """``text`` as a QR code, an inline SVG that scales with its box (dark on light, with
    the quiet zone round it that phone cameras need)."""
    code = segno.make(text, error="m", micro=False)
    svg: str = code.svg_inline(scale=1, dark="#000", light="#fff", border=4, omitsize=True)
    return svg
