"""TLS on the link, client side: how stations and the hub dial the broker.

Stations, hub and mosquitto talk over the venue's Wi-Fi, and what they say includes
broker passwords and each seat's secret screen: the link is TLS (1.2 at least), with
the broker's certificate checked against the table's own CA and its host name. Only
the stdlib's ``ssl`` is needed here; making certificates is the hub's job
(:mod:`firmware.hub.certs`).
"""

from __future__ import annotations

import os
import ssl

CA_FILE = "ca.crt"
CERT_FILE = "broker.crt"
KEY_FILE = "broker.key"
TLS_PORT = 8883  # IANA "secure-mqtt"; plain MQTT stays on 1883


def check_ca_file(ca_file: str | os.PathLike[str]) -> None:
    """Raise ValueError (one line) unless ``ca_file`` holds at least one PEM certificate.

    An empty file, a DER certificate or a private key would otherwise only fail when
    the link is first dialled, deep inside the MQTT client.
    """
    try:
        ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=os.fspath(ca_file))
    except ssl.SSLError:
        raise ValueError(
            "holds no PEM certificate (it should begin with -----BEGIN CERTIFICATE-----: "
            "copy ca.crt from the hub's broker-config folder)"
        ) from None
    except OSError as exc:
        raise ValueError(f"cannot be read ({exc.strerror})") from None


def client_context(ca_file: str | os.PathLike[str]) -> ssl.SSLContext:
    """TLS 1.2+ trusting only ``ca_file``, with the broker's host name checked."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=os.fspath(ca_file))
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    return context


def unverified_context() -> ssl.SSLContext:
    """TLS 1.2+ that checks no certificate: only for pairing, before the station has the
    table's CA (what it learns there is vouched for by the pairing code, not by TLS)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
