#!/usr/bin/env bash
# Provision a Raspberry Pi (Raspberry Pi OS Bookworm) as a coffre hub or station.
#   sudo bash deploy/provision-pi.sh hub
#   sudo bash deploy/provision-pi.sh station
# Run from a checkout of coffre on the Pi. It installs into /opt/coffre/venv, creates the
# 'coffre' user, enables SPI and I2C, installs the systemd unit and a config template in
# /etc/coffre/ that you then edit (broker address, station id, password file).
set -euo pipefail
role=${1:?usage: provision-pi.sh hub|station}
src=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "run as root (sudo)" >&2; exit 1; }

apt-get update -qq
apt-get install -y -qq python3-venv python3-dev gcc swig liblgpio-dev >/dev/null
if [ "$role" = hub ]; then
  apt-get install -y -qq mosquitto >/dev/null
fi
if command -v raspi-config >/dev/null; then
  raspi-config nonint do_spi 0
  raspi-config nonint do_i2c 0
fi

id coffre >/dev/null 2>&1 || useradd --system --home /var/lib/coffre --shell /usr/sbin/nologin coffre
for group in gpio spi i2c; do getent group "$group" >/dev/null && usermod -aG "$group" coffre; done

python3 -m venv /opt/coffre/venv
/opt/coffre/venv/bin/pip install --quiet --upgrade pip
extras=pi
[ "$role" = hub ] && extras=pi,display  # the hub also serves the table display
/opt/coffre/venv/bin/pip install --quiet "$src[$extras]"

install -d -m 0755 /etc/coffre
case "$role" in
  hub)
    [ -f /etc/coffre/hub.toml ] || cat > /etc/coffre/hub.toml <<'TOML'
[broker]
host = "127.0.0.1"
port = 8883
username = "hub"
password_file = "/etc/coffre/hub.password"
ca_file = "/etc/mosquitto/coffre/ca.crt"

[store]
path = "/var/lib/coffre/hub.sqlite3"

[panel]
backend = "real"

[[table]]
name = "main"
stations = ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8"]
reveal_delay = 3.0
TOML
    echo "next: coffre broker-config --table main --stations p1,...,p8 --out /etc/mosquitto/coffre \\"
    echo "        --hostname $(hostname) --hostname $(hostname).local   # + the hub's IP if stations use it"
    echo "      cp deploy/mosquitto.conf /etc/mosquitto/conf.d/coffre.conf; systemctl restart mosquitto"
    echo "      install -m 0600 -o coffre /etc/mosquitto/coffre/credentials/hub.password /etc/coffre/"
    echo "      copy /etc/mosquitto/coffre/ca.crt to every station as /etc/coffre/ca.crt"
    [ -f /etc/coffre/display.toml ] || cat > /etc/coffre/display.toml <<'TOML'
tables = ["main"]

[broker]
host = "127.0.0.1"
port = 8883
username = "spectator"
password_file = "/etc/coffre/spectator.password"
ca_file = "/etc/mosquitto/coffre/ca.crt"

[http]
host = "0.0.0.0"
port = 8080
TOML
    echo "      install -m 0600 -o coffre /etc/mosquitto/coffre/credentials/spectator.password /etc/coffre/"
    echo "      the table display: http://$(hostname).local:8080/ (unit coffre-display)"
    install -m 0644 "$src/deploy/systemd/coffre-display.service" /etc/systemd/system/
    systemctl daemon-reload
    systemctl enable coffre-display.service
    ;;
  station)
    [ -f /etc/coffre/station.toml ] || cat > /etc/coffre/station.toml <<'TOML'
[broker]
host = "coffre-hub.local"
port = 8883
username = "main.p1"
password_file = "/etc/coffre/station.password"
ca_file = "/etc/coffre/ca.crt"

[station]
table = "main"
id = "p1"
backend = "real"
TOML
    echo "next: edit /etc/coffre/station.toml (id, username, the hub's host name as on its"
    echo "      certificate) and copy from the hub its password file and ca.crt to /etc/coffre/"
    echo "      then check the parts: /opt/coffre/venv/bin/coffre selftest --backend real"
    ;;
  *) echo "role must be hub or station" >&2; exit 64 ;;
esac
install -m 0644 "$src/deploy/systemd/coffre-$role.service" /etc/systemd/system/
systemctl daemon-reload
systemctl enable "coffre-$role.service"
echo "installed; start with: systemctl start coffre-$role"
