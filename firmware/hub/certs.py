"""Certificates for a table's broker: a small private CA and the broker's certificate.

``coffre broker-config`` calls :func:`write_tls_files` with ``keep_ca=True``: the first
run makes the table's CA and keeps its private key as ``ca.key`` (0600, for root only:
never handed to mosquitto); every later run signs a new broker certificate (new host
names, say) with the same CA, so the ``ca.crt`` on the stations stays valid. It writes
``ca.crt`` (public: copy it to every station), ``broker.crt`` and ``broker.key`` (0600).
Without ``keep_ca`` (test brokers) a fresh CA is made and its key is not kept.

Runs on the hub only: it needs ``cryptography``, which a station never installs. It runs
as root in a folder the hub's user may write in (pairing): nothing here reads, writes or
changes a file through a symbolic link (see :mod:`firmware.hub.safefiles`).
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from firmware.hub import safefiles
from firmware.link.tls import CA_FILE, CERT_FILE, KEY_FILE

if TYPE_CHECKING:
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric.ec import EllipticCurvePrivateKey

CA_KEY_FILE = "ca.key"

#: Stations have no RTC: one that was off for months and finds no NTP at the venue
#: must still accept a certificate made this morning, so validity starts a year back.
BACKDATE = datetime.timedelta(days=365)
VALIDITY = datetime.timedelta(days=20 * 365)
#: The largest certificate or key read back (ours are under 1 kB).
MAX_PEM = 64 * 1024


@dataclass(frozen=True)
class TlsFiles:
    """Where the CA certificate, the broker certificate and its key were written."""

    ca: Path
    cert: Path
    key: Path
    #: False: the broker certificate already there was kept (same CA, same names), so a
    #: running broker needs no restart to serve it.
    signed: bool = True


def default_hostnames() -> list[str]:
    """This machine's host name (and its mDNS ``.local`` name), ``localhost``, 127.0.0.1."""
    return broker_hostnames(None)


def broker_hostnames(given: Sequence[str] | None) -> list[str]:
    """The names on the broker's certificate: ``given`` (default: this machine's name and
    its ``.local`` name), always with ``localhost`` and 127.0.0.1, which the hub dials."""
    if not given:
        name = socket.gethostname().strip()
        given = [name, f"{name}.local"] if name and "." not in name else [name]
    return _unique([*given, "localhost", "127.0.0.1"])


def _unique(names: Sequence[str]) -> list[str]:
    seen: list[str] = []
    for name in names:
        name = name.strip()
        if name and name.lower() not in [s.lower() for s in seen]:
            seen.append(name)
    return seen


def _general_name(name: str) -> x509.GeneralName:
    from cryptography import x509

    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def make_certificates(
    hostnames: Sequence[str], *, now: datetime.datetime | None = None
) -> tuple[bytes, bytes, bytes]:
    """A new CA and a broker certificate for ``hostnames``: (ca PEM, cert PEM, key PEM)."""
    from cryptography.hazmat.primitives import serialization

    ca_key, ca_cert = make_ca(now=now)
    cert_pem, key_pem = sign_broker(ca_key, ca_cert, hostnames, now=now)
    return ca_cert.public_bytes(serialization.Encoding.PEM), cert_pem, key_pem


def make_ca(
    *, now: datetime.datetime | None = None
) -> tuple[EllipticCurvePrivateKey, x509.Certificate]:
    """A new CA for one table: its private key and its self-signed certificate."""
    # Only the hub makes certificates: stations need nothing but the stdlib's ssl.
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = now or datetime.datetime.now(datetime.UTC)
    start, end = now - BACKDATE, now + VALIDITY
    ca_key = ec.generate_private_key(ec.SECP256R1())
    # A distinct name per CA: two tables (or two runs) never trust each other's broker.
    ca_name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "coffre"),
            x509.NameAttribute(NameOID.COMMON_NAME, f"coffre table CA {secrets.token_hex(4)}"),
        ]
    )
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return ca_key, ca_cert


def sign_broker(
    ca_key: EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    hostnames: Sequence[str],
    *,
    now: datetime.datetime | None = None,
) -> tuple[bytes, bytes]:
    """A broker certificate for ``hostnames`` signed by the CA: (cert PEM, key PEM)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    names = _unique(hostnames)
    if not names:
        raise ValueError("the broker certificate needs at least one host name or address")
    now = now or datetime.datetime.now(datetime.UTC)
    start, end = now - BACKDATE, now + VALIDITY
    ca_name = ca_cert.subject
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(
            x509.Name(
                [
                    x509.NameAttribute(NameOID.ORGANIZATION_NAME, "coffre"),
                    x509.NameAttribute(NameOID.COMMON_NAME, names[0][:64]),
                ]
            )
        )
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName([_general_name(n) for n in names]), False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    return cert.public_bytes(pem), _private_pem(key)


def _private_pem(key: EllipticCurvePrivateKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def write_tls_files(out: Path, hostnames: Sequence[str], *, keep_ca: bool = False) -> TlsFiles:
    """Write ``ca.crt``, ``broker.crt`` and ``broker.key`` (0600) into ``out``.

    ``keep_ca``: reuse the CA of ``ca.key`` + ``ca.crt`` if both are there (the stations'
    ``ca.crt`` stays valid), else make one and keep its key in ``ca.key`` (0600).
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    out.mkdir(parents=True, exist_ok=True)
    files = TlsFiles(out / CA_FILE, out / CERT_FILE, out / KEY_FILE)
    ca_key_file = out / CA_KEY_FILE
    for path in (files.ca, files.cert, files.key, ca_key_file):  # before writing any
        safefiles.check_kind(path, folder=False)
    key_pem = safefiles.read(ca_key_file, MAX_PEM) if keep_ca else None
    ca_pem = safefiles.read(files.ca, MAX_PEM) if key_pem is not None else None
    if key_pem is not None and ca_pem is not None:
        loaded = serialization.load_pem_private_key(key_pem, password=None)
        if not isinstance(loaded, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{ca_key_file} is not the table CA's key")
        ca_key, ca_cert = loaded, x509.load_pem_x509_certificate(ca_pem)
    else:
        ca_key, ca_cert = make_ca()
        safefiles.replace(files.ca, ca_cert.public_bytes(serialization.Encoding.PEM), 0o644)
        if keep_ca:
            write_private(ca_key_file, _private_pem(ca_key))
    if keep_ca and _still_valid(files, ca_cert, hostnames):
        return TlsFiles(files.ca, files.cert, files.key, signed=False)
    cert_pem, broker_key = sign_broker(ca_key, ca_cert, hostnames)
    safefiles.replace(files.cert, cert_pem, 0o644)
    write_private(files.key, broker_key)
    return files


def certificate_names(cert: x509.Certificate) -> list[str]:
    """The names and addresses on a certificate (its subjectAltName), in order."""
    from cryptography import x509

    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [str(name.value) for name in san]


def _still_valid(files: TlsFiles, ca_cert: x509.Certificate, hostnames: Sequence[str]) -> bool:
    """Whether the broker certificate on disk comes from ``ca_cert``, names exactly
    ``hostnames`` and has its key: then a re-run keeps it (no broker restart)."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature

    cert_pem = safefiles.read(files.cert, MAX_PEM)
    if cert_pem is None or not safefiles.check_kind(files.key, folder=False):
        return False
    try:
        cert = x509.load_pem_x509_certificate(cert_pem)
        cert.verify_directly_issued_by(ca_cert)
    except (InvalidSignature, ValueError, TypeError, OSError):
        return False
    return certificate_names(cert) == _unique(hostnames)


def write_private(path: Path, data: bytes) -> None:
    """Write a secret file 0600: never readable by others, not even for an instant.

    Made new beside ``path`` and renamed over it (so a reader sees the old secret or the
    new one, never half of one), never written through a link: a ``path`` that is a
    symbolic link is refused (:class:`~firmware.hub.safefiles.UnsafeFile`, an OSError).
    """
    safefiles.replace(path, data, 0o600)


def listener_lines(files: TlsFiles) -> list[str]:
    """The TLS lines of a mosquitto listener block (they follow its ``listener`` line)."""
    return [
        f"cafile {files.ca}",
        f"certfile {files.cert}",
        f"keyfile {files.key}",
        "tls_version tlsv1.2",
    ]
