#!/usr/bin/env bash
# Install (Debian package, if missing) and start a throwaway PostgreSQL server on
# loopback for the study-mode tests; print its URL as the only line on stdout.
#
#   export CANDOR_TEST_POSTGRES_URL="$(scripts/start_postgres.sh)"
#   .venv/bin/python -m pytest tests/study
#   scripts/start_postgres.sh --stop          # stops the server started last
#
# Environment: CANDOR_PG_PORT (default 55432), CANDOR_PG_DIR (default: a new
# mktemp directory). fsync is off: a throwaway test server, never for data you keep.
# The cluster's superuser is "candor" with a random
# password (scram-sha-256), listening on 127.0.0.1 only; nothing touches the
# Debian default cluster. Progress goes to stderr.
set -euo pipefail

STATE=/tmp/candor-pg.last
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

if [ "${1:-}" = "--stop" ]; then
  DIR="${2:-$(cat "$STATE")}"
  as_pg "$(pg_bin)/pg_ctl" -D "$DIR/data" -m fast -w stop >&2
  rm -rf "$DIR"
  exit 0
fi

if [ -z "$(pg_bin)" ]; then
  echo "installing postgresql (Debian package)..." >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends postgresql >&2
fi
BIN="$(pg_bin)"
PORT="${CANDOR_PG_PORT:-55432}"
DIR="${CANDOR_PG_DIR:-$(mktemp -d /tmp/candor-pg.XXXXXX)}"
mkdir -p "$DIR"
[ "$(id -u)" = 0 ] && chown postgres "$DIR"
chmod 700 "$DIR"

PASS="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 24)"
PWFILE="$DIR/pw"
printf '%s\n' "$PASS" > "$PWFILE"
[ "$(id -u)" = 0 ] && chown postgres "$PWFILE"
as_pg "$BIN/initdb" -D "$DIR/data" -U candor --pwfile="$PWFILE" --auth=scram-sha-256 -E UTF8 >&2
rm -f "$PWFILE"
as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c fsync=off" start >&2
PGPASSWORD="$PASS" "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U candor candor_test >&2
echo "$DIR" > "$STATE"
echo "started PostgreSQL in $DIR (stop: $0 --stop $DIR)" >&2
echo "postgresql://candor:${PASS}@127.0.0.1:${PORT}/candor_test"
