#!/usr/bin/env bash
# Install (Debian package, if missing) and start a throwaway Redis server on loopback for the
# Celery job tests; print its URL as the only line on stdout.
#
#   export CANDOR_TEST_REDIS_URL="$(scripts/start_redis.sh)"
#   .venv/bin/python -m pytest tests/app/test_celery_jobs.py
#   scripts/start_redis.sh --stop             # stops the server started last
#
# Environment: CANDOR_REDIS_PORT (default: a free port), CANDOR_REDIS_DIR (default: a new mktemp
# directory). Nothing is saved to disk (no RDB, no AOF): a throwaway test server, never for data you
# keep. It listens on 127.0.0.1 only, with a random password; the Debian default service is not
# touched. Progress goes to stderr.
set -euo pipefail

STATE=/tmp/candor-redis.last

if [ "${1:-}" = "--stop" ]; then
  DIR="${2:-$(cat "$STATE")}"
  if [ -f "$DIR/redis.pid" ]; then
    kill "$(cat "$DIR/redis.pid")" 2>/dev/null || true
    for _ in $(seq 50); do [ -f "$DIR/redis.pid" ] || break; sleep 0.1; done
  fi
  rm -rf "$DIR"
  exit 0
fi

if ! command -v redis-server >/dev/null; then
  echo "installing redis-server (Debian package)..." >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends redis-server >&2
  # the package starts its own service on 6379; this script never uses it
fi
PY="$(command -v python3 || echo "$(dirname "$0")/../.venv/bin/python")"
PORT="${CANDOR_REDIS_PORT:-$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
DIR="${CANDOR_REDIS_DIR:-$(mktemp -d /tmp/candor-redis.XXXXXX)}"
mkdir -p "$DIR"
chmod 700 "$DIR"
PASS="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 24)"
# the password goes in a config file, not on the command line (visible in ps)
cat > "$DIR/redis.conf" <<CONF
bind 127.0.0.1
port $PORT
dir $DIR
pidfile $DIR/redis.pid
logfile $DIR/redis.log
daemonize yes
save ""
appendonly no
requirepass $PASS
CONF
redis-server "$DIR/redis.conf" >&2
for _ in $(seq 100); do
  redis-cli -h 127.0.0.1 -p "$PORT" --no-auth-warning -a "$PASS" ping 2>/dev/null | grep -q PONG && break
  sleep 0.1
done
redis-cli -h 127.0.0.1 -p "$PORT" --no-auth-warning -a "$PASS" ping 2>/dev/null | grep -q PONG \
  || { echo "redis-server did not start; see $DIR/redis.log" >&2; exit 1; }
echo "$DIR" > "$STATE"
echo "started Redis on 127.0.0.1:$PORT in $DIR (stop: $0 --stop $DIR)" >&2
echo "redis://:${PASS}@127.0.0.1:${PORT}/0"
