#!/usr/bin/env bash
# Provision a Raspberry Pi (Raspberry Pi OS Bookworm, 64-bit; 32-bit: see docs) as a coffre hub or station.
#   sudo bash deploy/provision-pi.sh hub [--table main] [--stations p1,p2,p3,p4,p5] [--address IP]
#   sudo bash deploy/provision-pi.sh station p1 [--table main] [--hub coffre-hub.local]
# Options: --port N (the broker's, default 8883; a re-run keeps the one in the config),
#   --language fr|en (the table's, hub only; default the config's, else the system's locale),
#   --keep-hostname (do not rename this Pi to coffre-hub / coffre-<id>).
# Run it from a checkout of coffre on the Pi. It checks its arguments first, then: enables
# SPI and I2C (I2C at 400 kHz), names the Pi, creates the 'coffre' user, installs into
# /opt/coffre/venv (and links coffre into /usr/local/bin), writes /etc/coffre/, installs and
# enables the systemd units; on a hub it also writes coffre's own broker (coffre-broker) and
# hands the hub and display their passwords. Re-run with other arguments: the configs are
# rewritten (the old one kept as .bak), and what runs and changed is restarted; it says so.
set -euo pipefail

usage() { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 64; }
fail() { echo "provision-pi: $1" >&2; exit "${2:-64}"; }
name_ok() { [[ $1 =~ ^[a-z0-9-]{1,32}$ ]]; }

# --- arguments: all checked before anything is installed ----------------------------------
role=${1:-}; shift || true
station_id=""
table=main
stations=p1,p2,p3,p4,p5
hub_host=coffre-hub.local
hub_addresses=()
set_hostname=1
port=""       # empty: the one in the config this run rewrites, else 8883
language=""   # empty: the one in hub.toml, else the system's locale (fr or en), else en
case "$role" in
  hub) ;;
  station)
    station_id=${1:-}; shift || true
    [ -n "$station_id" ] || fail "station needs its id: provision-pi.sh station p1"
    ;;
  -h|--help|"") usage ;;
  *) fail "role must be hub or station, not '$role'" ;;
esac
while [ $# -gt 0 ]; do
  case "$1" in
    --table) table=${2:?--table needs a name}; shift 2 ;;
    --stations) stations=${2:?--stations needs p1,p2,...}; shift 2 ;;
    --hub) hub_host=${2:?--hub needs the host name of the hub}; shift 2 ;;
    --keep-hostname) set_hostname=0; shift ;;
    --port) port=${2:?--port needs a port number}; shift 2 ;;
    --language) language=${2:?--language needs fr or en}; shift 2 ;;
    --address) hub_addresses+=(--hostname "${2:?--address needs an IP address of the hub}"); shift 2 ;;
    *) fail "unknown option '$1' (see: provision-pi.sh --help)" ;;
  esac
done
name_ok "$table" || fail "table '$table': use a-z, 0-9 and '-', at most 32"
if [ -n "$port" ]; then
  [[ $port =~ ^[0-9]{1,5}$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] \
    || fail "port '$port': a number from 1 to 65535"
fi
if [ -n "$language" ]; then
  [ "$role" = hub ] || fail "--language is the table's: give it to the hub (its stations follow)"
  [[ $language =~ ^(fr|en)$ ]] || fail "language '$language': fr or en"
fi
if [ "$role" = station ]; then
  name_ok "$station_id" || fail "station id '$station_id': use a-z, 0-9 and '-', at most 32"
else
  IFS=, read -r -a seat_list <<< "$stations"
  [ "${#seat_list[@]}" -gt 0 ] || fail "--stations needs at least one id"
  for s in "${seat_list[@]}"; do
    name_ok "$s" || fail "station id '$s' in --stations: use a-z, 0-9 and '-', at most 32"
  done
fi
src=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$src/pyproject.toml" ] || fail "run it from a coffre checkout (no $src/pyproject.toml)"
[ "$(id -u)" = 0 ] || fail "run it as root: sudo bash $0 ..." 77
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || fail "Python 3.11 or later is needed (Raspberry Pi OS Bookworm has it)" 69
hostname_new=$([ "$role" = hub ] && echo coffre-hub || echo "coffre-$station_id")
machine=$(uname -m)
steps=$([ "$role" = hub ] && echo 7 || echo 6)
config=/etc/coffre/$([ "$role" = hub ] && echo hub || echo station).toml

# toml_value FILE SECTION KEY: KEY's value in FILE's first [SECTION] or [[SECTION]], unquoted.
toml_value() {
  [ -f "$1" ] || return 0
  awk -v want="$2" -v key="$3" '
    /^[[:space:]]*\[/ { s = $0; gsub(/[][[:space:]]/, "", s); here = (s == want); next }
    here && $1 == key && $2 == "=" { v = $3; gsub(/"/, "", v); print v; exit }' "$1"
}
# A re-run without --port or --language keeps what the config says: a host who chose them
# once need not say them again.
[ -n "$port" ] || port=$(toml_value "$config" broker port)
[[ $port =~ ^[0-9]{1,5}$ ]] || port=8883
if [ "$role" = hub ] && [ -z "$language" ]; then
  language=$(toml_value "$config" table language)
  if [[ ! $language =~ ^(fr|en)$ ]]; then
    system_locale=${LC_ALL:-${LC_MESSAGES:-${LANG:-}}}
    [ -n "$system_locale" ] || system_locale=$(sed -n 's/^LANG=//p' /etc/default/locale 2>/dev/null | tr -d '"')
    case "$system_locale" in fr*) language=fr ;; *) language=en ;; esac
  fi
fi
# port_taken: who listens on $port, if it is not coffre's own broker ("" when free or ours).
port_taken() {
  command -v ss >/dev/null || return 0
  local line pid who
  line=$(ss -ltnpH "sport = :$port" 2>/dev/null | head -1)
  [ -n "$line" ] || return 0
  pid=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' <<< "$line")
  who=$(sed -n 's/.*users:(("\([^"]*\)".*/\1/p' <<< "$line")
  if [ -n "$pid" ] && tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline" | grep -q '/etc/mosquitto/coffre/'; then
    return 0  # coffre-broker itself: a re-run on the same port
  fi
  if [ -n "$who" ]; then echo "$who (pid $pid)"; else echo "a program ss -ltnp does not name"; fi
}
if [ "$role" = hub ]; then
  taken_by=$(port_taken)
  [ -z "$taken_by" ] || fail "port $port is taken by $taken_by: choose another with --port (e.g. --port $((port == 65535 ? 8884 : port + 1))), and give the stations the same --port" 75
fi
step=0
progress() { step=$((step + 1)); echo "[$step/$steps] $*"; }
changed=()   # units whose config this run changed
# put_config FILE UNIT: the text on stdin becomes FILE; a different old one is kept as .bak.
put_config() {
  local file=$1 unit=$2 new
  new=$(cat)
  if [ -f "$file" ] && [ "$(cat "$file")" = "$new" ]; then
    echo "  $file: unchanged"; return
  fi
  if [ -f "$file" ]; then
    cp -p "$file" "$file.bak"
    echo "  $file: updated (the old one is $file.bak):"
    diff <(cat "$file.bak") <(printf '%s\n' "$new") | sed -n -e 's/^< /    - /p' -e 's/^> /    + /p' \
      | head -20 || true
    changed+=("$unit")
  else
    echo "  $file: written"
  fi
  printf '%s\n' "$new" > "$file"
}

# --- the work -------------------------------------------------------------------------------
progress "system packages (apt)"
apt-get update -qq
# gcc and the headers build spidev (no wheel on PyPI); on 32-bit Pi OS pillow, msgspec, cffi,
# cbor2 and PyNaCl have no PyPI wheel either: piwheels has them (named below), and the jpeg,
# zlib, ffi and libsodium headers let pip build one where piwheels lacks it.
packages=(python3-venv python3-dev gcc)
[ "$machine" = armv7l ] && packages+=(libjpeg-dev zlib1g-dev libffi-dev libsodium-dev)
[ "$role" = hub ] && packages+=(mosquitto)
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null

progress "SPI and I2C on, I2C at 400 kHz (a full OLED frame: 23 ms instead of 93 ms)"
if command -v raspi-config >/dev/null; then
  raspi-config nonint do_spi 0
  raspi-config nonint do_i2c 0
fi
boot_config=/boot/firmware/config.txt
[ -f "$boot_config" ] || boot_config=/boot/config.txt
if [ -f "$boot_config" ]; then
  if grep -q '^dtparam=i2c_arm_baudrate=' "$boot_config"; then
    sed -i 's/^dtparam=i2c_arm_baudrate=.*/dtparam=i2c_arm_baudrate=400000/' "$boot_config"
  else
    echo 'dtparam=i2c_arm_baudrate=400000' >> "$boot_config"
  fi
else
  echo "  no config.txt found: add dtparam=i2c_arm_baudrate=400000 to it yourself" >&2
fi

progress "host name and the coffre user"
if [ "$set_hostname" = 1 ] && [ "$(hostname)" != "$hostname_new" ]; then
  old=$(hostname)
  if command -v hostnamectl >/dev/null && hostnamectl set-hostname "$hostname_new" 2>/dev/null; then :
  else echo "$hostname_new" > /etc/hostname; hostname "$hostname_new" 2>/dev/null || true; fi
  touch /etc/hosts
  sed -i "s/^127\.0\.1\.1.*/127.0.1.1\t$hostname_new/" /etc/hosts
  grep -q '^127\.0\.1\.1' /etc/hosts || printf '127.0.1.1\t%s\n' "$hostname_new" >> /etc/hosts
  echo "  renamed $old -> $hostname_new (reachable as $hostname_new.local once avahi restarts)"
fi
id coffre >/dev/null 2>&1 \
  || useradd --system --home-dir /var/lib/coffre --no-create-home --shell /usr/sbin/nologin coffre
for group in gpio spi i2c; do
  if getent group "$group" >/dev/null; then usermod -aG "$group" coffre; fi
done

progress "coffre into /opt/coffre/venv (a few minutes on a Zero 2 W)"
# The hub also serves the table display (a web page): the "display" extra.
extra=$([ "$role" = hub ] && echo hub,display || echo station)
python3 -m venv /opt/coffre/venv
/opt/coffre/venv/bin/pip install --quiet --upgrade pip
pip_index=()
if [ "$machine" = armv7l ]; then
  # 32-bit Pi OS: piwheels' armv7 wheels (Pi OS names it in /etc/pip.conf; said again here in
  # case that file was changed); PyNaCl, if built, links Debian's libsodium (minutes, not an hour).
  pip_index=(--extra-index-url https://www.piwheels.org/simple)
  export SODIUM_INSTALL=system
fi
/opt/coffre/venv/bin/pip install --quiet "${pip_index[@]}" "$src[$extra]"
# mfrc522 requires RPi.GPIO, whose files rpi-lgpio (in the station extra) already provides
# on top of lgpio: without --no-deps pip would put the real RPi.GPIO over them.
[ "$role" = station ] && /opt/coffre/venv/bin/pip install --quiet --no-deps mfrc522
/opt/coffre/venv/bin/coffre --version
# `coffre doctor`, `coffre backup` and the rest from any shell:
ln -sf /opt/coffre/venv/bin/coffre /usr/local/bin/coffre

progress "config template in /etc/coffre"
install -d -m 0755 /etc/coffre
if [ "$role" = hub ]; then
  quoted=$(printf '"%s", ' "${seat_list[@]}")
  put_config /etc/coffre/hub.toml coffre-hub <<TOML
# written by provision-pi.sh hub: re-running it rewrites this file (the old one: hub.toml.bak)
# keyset = "/etc/coffre/keys.toml"   # your tags (coffre keys learn); top-level, above [broker]

[broker]
host = "127.0.0.1"
port = $port
username = "hub"
password_file = "/etc/coffre/hub.password"
ca_file = "/etc/mosquitto/coffre/ca.crt"

[store]
path = "/var/lib/coffre/hub.sqlite3"

[panel]
backend = "real"

[pairing]
broker_dir = "/etc/mosquitto/coffre"   # stations pair with the host's ok (docs/pairing.md)

[backup]
dir = "/var/lib/coffre/backups"   # the console asks root for sealed backups (docs/backup.md)

[[table]]
name = "$table"
stations = [${quoted%, }]
reveal_delay = 3.0
language = "$language"
TOML
  put_config /etc/coffre/display.toml coffre-display <<TOML
# written by provision-pi.sh hub
tables = ["$table"]
language = "$language"

[broker]
host = "127.0.0.1"
port = $port
username = "spectator"
password_file = "/etc/coffre/spectator.password"
ca_file = "/etc/mosquitto/coffre/ca.crt"

[http]
host = "0.0.0.0"
port = 8080
TOML
else
  old_user=$(sed -n 's/^username = "\(.*\)"$/\1/p' /etc/coffre/station.toml 2>/dev/null || true)
  put_config /etc/coffre/station.toml coffre-station <<TOML
# written by provision-pi.sh station: re-running it rewrites this file (the old one: .bak)
[broker]
host = "$hub_host"
port = $port
username = "$table.$station_id"
# Written by pairing (docs/pairing.md) in the service's own state folder, 0600.
password_file = "/var/lib/coffre-station/station.password"
ca_file = "/var/lib/coffre-station/ca.crt"

[station]
table = "$table"
id = "$station_id"
backend = "real"
TOML
  if [ -n "$old_user" ] && [ "$old_user" != "$table.$station_id" ] && [ -f /var/lib/coffre-station/station.password ]; then
    rm -f /var/lib/coffre-station/station.password
    echo "  the old station.password was $old_user's: removed, this station pairs again as $table.$station_id" >&2
  fi
fi

units=("coffre-$role")
[ "$role" = hub ] && units=(coffre-broker coffre-hub coffre-display)
progress "systemd units ${units[*]} (enabled, not started)"
for unit in "${units[@]}"; do
  install -m 0644 "$src/deploy/systemd/$unit.service" /etc/systemd/system/
done
if [ "$role" = hub ]; then  # pairing: the broker reloads when the hub adds a station's user;
  # the console's backups: root makes the sealed backup the hub asks for
  install -m 0644 "$src/deploy/systemd/coffre-broker-reload.path" \
    "$src/deploy/systemd/coffre-broker-reload.service" \
    "$src/deploy/systemd/coffre-backup.path" "$src/deploy/systemd/coffre-backup.service" \
    /etc/systemd/system/
fi
systemctl daemon-reload 2>/dev/null || true
for unit in "${units[@]}"; do
  systemctl enable "$unit.service" 2>/dev/null || echo "  (no systemd running: enable $unit.service later)"
done
if [ "$role" = hub ]; then
  for watch in coffre-broker-reload coffre-backup; do
    systemctl enable --now "$watch.path" 2>/dev/null \
      || echo "  (no systemd running: enable $watch.path later)"
  done
fi

if [ "$role" = hub ]; then
  progress "coffre's own broker (coffre-broker, port $port; the distribution's mosquitto is left alone)"
  old_snippet=/etc/mosquitto/conf.d/coffre.conf
  if [ -f "$old_snippet" ] && head -1 "$old_snippet" | grep -q '^# generated by coffre'; then
    rm -f "$old_snippet"
    echo "  removed an older coffre's $old_snippet; restarting mosquitto (it served coffre before)"
    systemctl restart mosquitto 2>/dev/null || echo "  (no systemd running: restart mosquitto later)"
  fi
  /opt/coffre/venv/bin/coffre broker-config --table "$table" --stations "$stations" \
    --port "$port" --out /etc/mosquitto/coffre --hostname "$hostname_new" --hostname "$hostname_new.local" \
    "${hub_addresses[@]}" --apply \
    | sed -e '/^next:/,$d' -e '/is not running; start it/d' -e 's/^/  /'
  # (broker-config's "next:" is for a broker set up by hand: here the hub's files are
  # installed just below, coffre-broker is started and the stations pair.)
  # coffre's own copy, not install(1): the hub's user writes in credentials/ and install
  # would follow a link it left there, handing it the file linked to (docs/config.md).
  for user in hub spectator; do
    /opt/coffre/venv/bin/python -c 'import sys
from pathlib import Path
from firmware.hub.brokerconf import ConfigError, hand_over
try:
    hand_over(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]))
except ConfigError as exc:
    sys.exit(f"coffre: {exc}")' /etc/mosquitto/coffre "$user" "/etc/coffre/$user.password"
  done
  if systemctl is-active --quiet coffre-broker 2>/dev/null; then :
  elif systemctl start coffre-broker 2>/dev/null; then echo "  started coffre-broker"
  else echo "  (no systemd running: start coffre-broker later)"; fi
fi
for unit in $(printf '%s\n' "${changed[@]}" | sort -u); do
  if systemctl is-active --quiet "$unit" 2>/dev/null; then
    systemctl restart "$unit" && echo "restarted $unit (its config changed)"
  fi
done

echo
echo "done. Next steps on this $role ($hostname_new):"
if [ "$role" = hub ]; then
  # The hub's display asks in the table's language (firmware/link/locale).
  ask=$([ "$language" = fr ] && echo "Appairer p1 ? 4721" || echo "Pair p1? 4721")
  station_port=$([ "$port" = 8883 ] && echo "" || echo " --port $port")
  cat <<EOF
  1. nothing to copy: each station pairs (provision it with --table $table$station_port).
     Its glass shows a code, this hub's display shows "$ask": same code,
     press ok (or: coffre host --table $table pair p1 4721). The table speaks $language
     (--language fr|en). A station added later: re-run this with the new --stations
  2. reboot (SPI, I2C speed and host name), then: sudo systemctl start coffre-hub coffre-display
     and check it: coffre doctor; the table display: http://$hostname_new.local:8080/
  3. back it up now and after each evening: sudo coffre backup --out /media/usb/hub.tar.gz
EOF
else
  cat <<EOF
  1. nothing to copy: once started, this station pairs with the hub. Its glass shows
     "Pair code 4721"; the host presses ok on the hub when its display shows the same code
  2. reboot (SPI, I2C speed and host name), then check this Pi: sudo coffre doctor
  3. sudo systemctl start coffre-station; the screen says what it does (a missing file
     or a silent part too, until it is fixed)
     ("Connecting to $hub_host...", then the hub's screen); log: journalctl -u coffre-station -f
EOF
fi
