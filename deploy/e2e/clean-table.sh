#!/usr/bin/env bash
# A hub and three stations, from clean Debian Bookworm to a played game, the install as a
# venue does it; then the hub is replaced (backup, a fresh hub, restore) and a replaced
# station pairs and a game is played.
#   sudo bash deploy/e2e/clean-table.sh [--game secret-identity] [--seed 1] [--reuse]
# Needs root, debootstrap, nft and iproute2 (apt-get install debootstrap nftables), the
# internet (Debian's mirror, PyPI) and a dev venv for the players (bash deploy/dev.sh makes
# .venv; PYTHON= another). COFFRE_E2E_ROOT (default /var/tmp/coffre-e2e) holds the roots.
# What it does, what it stands in for and what it counts: docs/clean-table.md.
set -euo pipefail
{ # read whole before it runs: the file may change meanwhile (a git pull)

src=$(cd "$(dirname "$0")/../.." && pwd)
game=secret-identity
seed=1
reuse=0   # --reuse: the machines of the last run, already provisioned (debugging only)
while [ $# -gt 0 ]; do
  case "$1" in
    --game) game=${2:?}; shift 2 ;;
    --seed) seed=${2:?}; shift 2 ;;
    --reuse) reuse=1; shift ;;
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "clean-table: unknown option '$1'" >&2; exit 64 ;;
  esac
done
E2E=${COFFRE_E2E_ROOT:-/var/tmp/coffre-e2e}
PYTHON=${PYTHON:-$src/.venv/bin/python}
MIRROR=${COFFRE_E2E_MIRROR:-http://deb.debian.org/debian}
[ "$(id -u)" = 0 ] || { echo "clean-table: run it as root" >&2; exit 77; }
for tool in debootstrap nft ip unshare nsenter git; do
  command -v "$tool" >/dev/null || { echo "clean-table: needs $tool (apt-get install debootstrap nftables)" >&2; exit 69; }
done
[ -x "$PYTHON" ] || { echo "clean-table: no $PYTHON: run bash deploy/dev.sh once, or set PYTHON" >&2; exit 69; }

machines=(hub p1 p2 p3)   # hub2 and p3b join them when the hub and p3 are replaced
declare -A address=([hub]=10.77.0.1 [p1]=10.77.0.11 [p2]=10.77.0.12 [p3]=10.77.0.13
  [hub2]=10.77.0.1 [p3b]=10.77.0.15)
hub_ip=${address[hub]}
port=8884          # 8883 is another app's broker on the hub (below)
other_broker=""    # that broker's pid
bridge=coffre-e2e
started=$(date +%s)
typed=0
confirmations=0
elapsed() { echo "$(( $(date +%s) - started )) s"; }
note() { echo "== [$(elapsed)] $*"; }

# --- the machinery (not a host's command) -------------------------------------------------
forward_before=$(cat /proc/sys/net/ipv4/ip_forward)
teardown() {
  set +e
  for m in "${machines[@]}"; do
    root=$E2E/$m
    if [ -d "$root/run/e2e" ]; then  # every unit the stand-in systemd started, by its pid
      for pidfile in "$root"/run/e2e/*.pid; do
        [ -f "$pidfile" ] || continue
        unit=$(basename "$pidfile" .pid)
        on_quiet "$m" systemctl stop "$unit" >/dev/null 2>&1
      done
    fi
    for mnt in srv/coffre.git root/.cache/pip dev/pts dev proc; do
      mountpoint -q "$root/$mnt" 2>/dev/null && umount -l "$root/$mnt"
    done
    mountpoint -q "$E2E/ns/$m" 2>/dev/null && umount "$E2E/ns/$m"
    ip netns del "coffre-e2e-$m" 2>/dev/null
  done
  [ -n "$other_broker" ] && kill "$other_broker" 2>/dev/null
  ip link del "$bridge" 2>/dev/null
  nft delete table ip coffre_e2e 2>/dev/null
  echo "$forward_before" > /proc/sys/net/ipv4/ip_forward
}
trap teardown EXIT

# on_quiet MACHINE CMD...: run CMD as root on that machine (its network, host name, root).
on_quiet() {
  local m=$1; shift
  ip netns exec "coffre-e2e-$m" nsenter --uts="$E2E/ns/$m" chroot "$E2E/$m" /usr/bin/env -i \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    TERM=dumb bash -c 'cd /root && "$@"' bash "$@"
}
# typed MACHINE 'command line': a command the host types at that Pi's prompt (counted).
typed() {
  local m=$1 line=$2
  typed=$((typed + 1))
  echo "host@${m}\$ $line     [command $typed]"
  on_quiet "$m" bash -c "$line" 2>&1 | tr '\r' '\n' | sed '/^Updating files/d'
  return "${PIPESTATUS[0]}"
}

note "clean Bookworm (debootstrap --variant=minbase, $MIRROR) in $E2E/base"
mkdir -p "$E2E/cache/pip" "$E2E/ns"
if [ ! -f "$E2E/base/.coffre-e2e-base" ]; then
  rm -rf "$E2E/base"
  # python3 and git: what Raspberry Pi OS Lite has; sudo and iproute2 too.
  debootstrap --variant=minbase --include=python3,git,ca-certificates,sudo,iproute2,procps \
    bookworm "$E2E/base" "$MIRROR" > "$E2E/debootstrap.log" 2>&1 \
    || { tail "$E2E/debootstrap.log"; exit 1; }
  touch "$E2E/base/.coffre-e2e-base"
fi
# The project's repository, as the README's git clone would fetch it: the committed HEAD.
rm -rf "$E2E/coffre.git"
git clone --quiet --bare "$src" "$E2E/coffre.git"
note "coffre at $(git -C "$src" rev-parse --short HEAD) ($(git -C "$src" status --porcelain | grep -c . || true) uncommitted changes left out)"

# new_machine M: a fresh copy of the clean root, its own network namespace on the LAN.
new_machine() {
  local m=$1 root=$E2E/$1
  if [ "$reuse" = 1 ] && [ -x "$root/opt/coffre/venv/bin/coffre" ]; then
    install -m 0755 "$src/deploy/e2e/systemctl.py" "$root/usr/bin/systemctl"
    rm -rf "$root/run/e2e" "$root/var/lib/coffre-station" "$root/var/log/e2e"
  else
  reuse=0
  rm -rf "$root"
  cp -a "$E2E/base" "$root"
  echo raspberrypi > "$root/etc/hostname"
  printf '127.0.0.1\tlocalhost\n127.0.1.1\traspberrypi\n' > "$root/etc/hosts"
  # This machine's own way out: a TLS-intercepting proxy's CA (if it has one) goes to
  # each machine, and pip is told to use the system's bundle (Pi OS has an /etc/pip.conf too).
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null 2>&1
    printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' > "$root/etc/pip.conf"
  fi
  # No systemd in a chroot: the stand-in runs each unit as its file says.
  install -m 0755 "$src/deploy/e2e/systemctl.py" "$root/usr/bin/systemctl"
  fi
  # A shared pip download cache (speed only; apt's would be locked by four apt-gets at
  # once) and the repository to clone.
  mkdir -p "$root/root/.cache/pip" "$root/srv/coffre.git"
  mount --bind "$E2E/cache/pip" "$root/root/.cache/pip"
  mount --bind -o ro "$E2E/coffre.git" "$root/srv/coffre.git"
  mount -t proc proc "$root/proc"
  mount --bind /dev "$root/dev"
  mount --bind /dev/pts "$root/dev/pts"
  ip netns add "coffre-e2e-$m"
  ip link add "e2e-$m" type veth peer name eth0 netns "coffre-e2e-$m"
  ip link set "e2e-$m" master "$bridge" up
  ip -n "coffre-e2e-$m" addr add "${address[$m]}/24" dev eth0
  ip -n "coffre-e2e-$m" link set eth0 up
  ip -n "coffre-e2e-$m" link set lo up
  ip -n "coffre-e2e-$m" route add default via 10.77.0.254
  touch "$E2E/ns/$m"
  unshare --uts="$E2E/ns/$m" hostname "$(cat "$root/etc/hostname")"
  echo "  $m: $root, ${address[$m]}"
}

note "four machines (fresh copies of the clean root), each its network namespace on one LAN"
ip link add "$bridge" type bridge
ip addr add 10.77.0.254/24 dev "$bridge"
ip link set "$bridge" up
echo 1 > /proc/sys/net/ipv4/ip_forward
nft add table ip coffre_e2e
nft 'add chain ip coffre_e2e post { type nat hook postrouting priority 100 ; }'
nft add rule ip coffre_e2e post ip saddr 10.77.0.0/24 ip daddr != 10.77.0.0/24 masquerade
for m in "${machines[@]}"; do new_machine "$m"; done

# Another app's broker already on the hub's 8883 (a distribution mosquitto, as for Home
# Assistant): coffre must run beside it, on another port, neither disturbing the other.
printf 'listener 8883\nallow_anonymous true\n' > "$E2E/other-app-mosquitto.conf"
ip netns exec coffre-e2e-hub "$(command -v mosquitto || echo /usr/sbin/mosquitto)" -c "$E2E/other-app-mosquitto.conf" > "$E2E/other-app-mosquitto.log" 2>&1 &
other_broker=$!
# other_app_answers: that broker still takes a client and a message (plain MQTT, anonymous).
other_app_answers() {
  "$PYTHON" - "$hub_ip" <<'EOF'
import sys, paho.mqtt.client as mqtt
c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
c.connect(sys.argv[1], 8883, 5)
c.loop_start()
sent = c.publish("other-app/ping", b"1", qos=1)
sent.wait_for_publish(5)
c.loop_stop()
sys.exit(0 if sent.is_published() else 1)
EOF
}
for _ in $(seq 50); do other_app_answers 2>/dev/null && break; sleep 0.2; done
echo "  another app's broker on the hub's 8883 (pid $other_broker): $(other_app_answers 2>&1 && echo answers || echo 'does NOT answer')"

if [ "$reuse" = 1 ]; then
  note "--reuse: the machines are the last run's, provisioned (their pairings undone); 9 commands not repeated"
  typed=9
  # The stations pair again: the hub forgets nothing, the broker takes the new passwords.
  on_quiet hub systemctl start coffre-broker
else
note "provisioning: on each Pi, what the README says (the four at once)"
typed hub "git clone /srv/coffre.git coffre"
for m in p1 p2 p3; do typed "$m" "git clone /srv/coffre.git coffre"; done
# The README's line first: 8883 is taken, provisioning says by what before installing.
if typed hub "sudo bash coffre/deploy/provision-pi.sh hub --table main --stations p1,p2,p3 --address $hub_ip"; then
  echo "  the hub took the other app's port 8883"; exit 1
fi
declare -A line=(
  [hub]="sudo bash coffre/deploy/provision-pi.sh hub --table main --stations p1,p2,p3 --address $hub_ip --port $port"
)
for m in p1 p2 p3; do
  line[$m]="sudo bash coffre/deploy/provision-pi.sh station $m --table main --hub $hub_ip --port $port"
done
pids=()
for m in "${machines[@]}"; do
  typed=$((typed + 1))
  echo "host@${m}\$ ${line[$m]}     [command $typed] (output: $E2E/$m.provision.log)"
  on_quiet "$m" bash -c "${line[$m]}" > "$E2E/$m.provision.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!machines[@]}"; do
  m=${machines[$i]}
  if wait "${pids[$i]}"; then echo "  $m provisioned:"; else echo "  $m: PROVISIONING FAILED:"; failed=1; fi
  sed 's/^/    | /' "$E2E/$m.provision.log" | tail -n 14
done
[ "$failed" = 0 ] || exit 1
fi

note "systemctl start (a reboot would start the same enabled units)"
typed hub "sudo systemctl start coffre-hub coffre-display"
for m in p1 p2 p3; do typed "$m" "sudo systemctl start coffre-station"; done

# pair HUB MACHINE ID: the host compares the station's code with the hub's and confirms once.
pair() {
  local hub=$1 m=$2 id=$3 code="" title=""
  # The hub display's title, in the table's language ("Pair p1? 4721", "Appairer p1 ? 4721"):
  # it shows one pairing at a time, in seat order.
  for _ in $(seq 120); do
    code=$(sed -n "s/.*$id: pairing code \([0-9]\{4\}\).*/\1/p" "$E2E/$m/var/log/e2e/coffre-station.service.log" | tail -1)
    title=$(on_quiet "$hub" coffre host --table main status 2>/dev/null | head -1 | sed 's/^[^:]*: hub [a-z]*: //' || true)
    [ -n "$code" ] && [[ $title == *" $id "*"$code" || $title == *" $id? $code" ]] && break
    sleep 1
  done
  [[ -n "$code" && $title == *"$code" ]] || { echo "  $m: no matching code on both screens (hub: $title):"; tail "$E2E/$m/var/log/e2e/coffre-station.service.log"; exit 1; }
  echo "  $m's glass: Pair code $code; the hub's display: $title"
  confirmations=$((confirmations + 1))
  typed "$hub" "sudo coffre host --table main pair $id $code"
}
# paired MACHINE: wait for the station's files from pairing, and show their mode and owner.
paired() {
  local m=$1
  for _ in $(seq 60); do
    [ -f "$E2E/$m/var/lib/coffre-station/station.password" ] && break
    sleep 1
  done
  echo "  $m: $(on_quiet "$m" stat -c '%n %a %U' /var/lib/coffre-station/station.password /var/lib/coffre-station/ca.crt | paste -sd' ')"
}

note "pairing: the host compares each station's code with the hub's and confirms once"
for m in p1 p2 p3; do pair hub "$m" "$m"; done
for m in p1 p2 p3; do paired "$m"; done
sleep 8  # the stations start on their (absent) parts and tell the hub
note "what the hub says of its seats (a check, not set-up: no chips in a chroot)"
on_quiet hub coffre host --table main status | sed 's/^/  | /'
note "coffre doctor on the hub and on p1 (checks; SKIPs and FAILs expected off a Pi)"
on_quiet hub coffre doctor 2>&1 | sed 's/^/  hub | /' || true
on_quiet p1 coffre doctor 2>&1 | sed 's/^/  p1 | /' || true

note "the players sit down: each station's seat is played by a bot on mock hardware with that station's paired files"
for m in p1 p2 p3; do on_quiet "$m" systemctl stop coffre-station; done
echo "  (stopped coffre-station on p1 p2 p3: machinery, a chroot has no reader or glass)"
PYTHONPATH=$src "$PYTHON" -m deploy.e2e.seats "$E2E" --table main --stations p1,p2,p3 \
  --game "$game" --seed "$seed" | sed 's/^/  | /'
status=${PIPESTATUS[0]}
page=$("$PYTHON" -c "import urllib.request as u; print(len(u.urlopen('http://$hub_ip:8080/table/main', timeout=10).read()))" 2>&1) || page="no answer: $page"
echo "  the table display http://$hub_ip:8080/table/main: $page bytes"
echo "  the other app's broker on 8883 after the game: $(other_app_answers 2>&1 && echo answers || echo 'does NOT answer')"
first_game=$status first_typed=$typed first_confirmations=$confirmations
[ "$first_game" = 0 ] || { echo "  the first game did not end: the hub is not replaced"; exit 1; }

note "replacing the hub: a backup on the old one, a fresh Pi, the backup restored"
typed hub "sudo coffre backup --out /root/hub-backup.tar.gz"
# The old hub dies (its card is lost); the stick with the backup goes to the new Pi, which
# takes the old one's address. Machinery, not the host's commands: a power cut, a USB stick.
for pidfile in "$E2E"/hub/run/e2e/*.pid; do
  on_quiet hub systemctl stop "$(basename "$pidfile" .pid)" >/dev/null 2>&1 || true
done
ip -n coffre-e2e-hub link set eth0 down
machines+=(hub2)
reuse=0 new_machine hub2
ip neigh flush dev "$bridge"  # the old hub's MAC for 10.77.0.1 (a real switch learns anew too)
cp -p "$E2E/hub/root/hub-backup.tar.gz" "$E2E/hub2/root/"
echo "  (the old hub is off the LAN; hub-backup.tar.gz is on the new Pi, as from a USB stick)"
typed hub2 "git clone /srv/coffre.git coffre"
typed hub2 "sudo bash coffre/deploy/provision-pi.sh hub --table main --stations p1,p2,p3 --address $hub_ip --port $port" \
  > "$E2E/hub2.provision.log" 2>&1 || { tail -n 20 "$E2E/hub2.provision.log"; exit 1; }
sed -n 1p "$E2E/hub2.provision.log"; tail -n 3 "$E2E/hub2.provision.log" | sed 's/^/    | /'
typed hub2 "sudo coffre restore /root/hub-backup.tar.gz"
typed hub2 "sudo systemctl restart coffre-broker"
typed hub2 "sudo systemctl start coffre-hub coffre-display"

note "a replaced station: p3's Pi is new (clean root, 10.77.0.15); it is provisioned as p3 and pairs with the new hub"
ip -n coffre-e2e-p3 link set eth0 down
machines+=(p3b)
reuse=0 new_machine p3b
typed p3b "git clone /srv/coffre.git coffre"
typed p3b "sudo bash coffre/deploy/provision-pi.sh station p3 --table main --hub $hub_ip --port $port" \
  > "$E2E/p3b.provision.log" 2>&1 || { tail -n 20 "$E2E/p3b.provision.log"; exit 1; }
sed -n 1p "$E2E/p3b.provision.log"; tail -n 3 "$E2E/p3b.provision.log" | sed 's/^/    | /'
typed p3b "sudo systemctl start coffre-station"
pair hub2 p3b p3
paired p3b
on_quiet p3b systemctl stop coffre-station
echo "  (stopped coffre-station on p3b: machinery, as for the first game)"

note "the second game on the restored hub: p1 and p2 with their old files, p3 on its new Pi"
PYTHONPATH=$src "$PYTHON" -m deploy.e2e.seats "$E2E" --hub hub2 --root p3=p3b --table main \
  --stations p1,p2,p3 --game "$game" --seed "$((seed + 1))" | sed 's/^/  | /'
status=${PIPESTATUS[0]}

note "done in $(elapsed): $typed commands typed ($first_typed to the first game: 4 git clone, 5 provisioning (one refused: 8883 taken), 4 systemctl start, $first_confirmations pairing confirmations; then $((typed - first_typed)) to replace the hub and p3, $((confirmations - first_confirmations)) confirmation), no file copied by hand but the backup"
exit "$status"
}
