#!/usr/bin/env bash
# The developer's entry point. Sets up what it needs, then:
#   bash deploy/dev.sh sim [coffre sim options]   # a simulated table plays a whole game
#   bash deploy/dev.sh test [pytest options]      # lint, type checks and the whole test suite
#   bash deploy/dev.sh [help]                     # these lines
# It makes .venv with the project installed in it; as root it also installs mosquitto
# (the tests run against a real broker; the simulator falls back to an embedded one)
# and chromium (the table display's browser tests).
set -euo pipefail
cd "$(dirname "$0")/.."

# What there is to run, before any set-up: asking costs nothing.
cmd=${1:-help}
shift || true
case "$cmd" in
  sim|test) ;;
  help|-h|--help)
    sed -n '2,5p' deploy/dev.sh | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "dev.sh: no command '$cmd'; there are: sim, test, help" >&2
    exit 64
    ;;
esac

venv=.venv
stamp="$venv/.installed"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -e '.[dev]'
  touch "$stamp"
fi

need_mosquitto() {
  command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing mosquitto..." >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto >/dev/null
    # The Debian package starts a system broker on 1883; the tests start their own.
    (systemctl stop mosquitto || service mosquitto stop) >/dev/null 2>&1 || true
  fi
  command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ]
}

need_chromium() {
  # The table display's browser tests drive Debian's chromium (never a downloaded one).
  [ -x /usr/bin/chromium ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium..." >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
  [ -x /usr/bin/chromium ]
}

case "$cmd" in
  sim)
    exec "$venv/bin/coffre" sim "$@"
    ;;
  test)
    if ! need_mosquitto; then
      echo "mosquitto is required for the test suite: install it (apt-get install mosquitto)" >&2
      exit 1
    fi
    if ! need_chromium; then
      echo "chromium is required for the table display's tests: apt-get install chromium" >&2
      exit 1
    fi
    "$venv/bin/ruff" check .
    "$venv/bin/ruff" format --check .
    "$venv/bin/mypy" rules device firmware hardware  # strict on rules/ and device/ (pyproject)
    exec "$venv/bin/pytest" "$@"
    ;;
esac
