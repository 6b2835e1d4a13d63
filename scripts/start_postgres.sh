#!/usr/bin/env bash
# Install (Debian package, if missing) and start a throwaway PostgreSQL server on
# loopback for the study-mode tests; print its URL as the only line on stdout.
#
#   PG_DIR="$(mktemp -d /tmp/candor-pg.XXXXXX)"
#   export CANDOR_TEST_POSTGRES_URL="$(CANDOR_PG_DIR="$PG_DIR" scripts/start_postgres.sh)"
#   .venv/bin/python -m pytest tests/study
#   scripts/start_postgres.sh --stop "$PG_DIR"   # stops exactly that server
#   scripts/start_postgres.sh --pause "$PG_DIR"  # stops it, keeping its data (a database outage)
#   scripts/start_postgres.sh --resume "$PG_DIR" # starts it again on the same port
#
# Environment: CANDOR_PG_PORT (default: a free port), CANDOR_PG_DIR (default: a new
# mktemp directory, named on stderr). --stop needs the directory: there is no "server
# started last" (one run stopped another's server and left its own running).
# fsync is off: a throwaway test server, never for data you keep.
# The cluster's superuser is "candor" with a random
# password (scram-sha-256), listening on 127.0.0.1 only; nothing touches the
# Debian default cluster. Progress goes to stderr.
set -euo pipefail

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

if [ "${1:-}" = "--pause" ] || [ "${1:-}" = "--resume" ]; then
  DIR="${2:-}"
  if [ -z "$DIR" ] || [ ! -f "$DIR/start.opts" ]; then
    echo "usage: $0 $1 DIR (the CANDOR_PG_DIR of a server this script started)" >&2
    exit 2
  fi
  if [ "$1" = "--pause" ]; then
    as_pg "$(pg_bin)/pg_ctl" -D "$DIR/data" -m fast -w stop >&2
  else
    as_pg "$(pg_bin)/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 -o "$(cat "$DIR/start.opts")" start >&2
  fi
  exit 0
fi

if [ "${1:-}" = "--stop" ]; then
  DIR="${2:-}"
  if [ -z "$DIR" ] || [ ! -d "$DIR" ]; then
    echo "usage: $0 --stop DIR (the CANDOR_PG_DIR the server was started in)" >&2
    exit 2
  fi
  if [ -f "$DIR/data/postmaster.pid" ]; then
    as_pg "$(pg_bin)/pg_ctl" -D "$DIR/data" -m fast -w stop >&2
  fi
  # only a directory this script made: a cluster's, or one left empty by a start that failed
  if [ -f "$DIR/data/PG_VERSION" ] || [ -z "$(ls -A "$DIR")" ]; then
    rm -rf "$DIR"
  else
    echo "$DIR holds no PostgreSQL cluster of this script; left as it is" >&2
  fi
  exit 0
fi

if [ -z "$(pg_bin)" ]; then
  echo "installing postgresql (Debian package)..." >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends postgresql >&2
fi
BIN="$(pg_bin)"
PY="$(command -v python3 || echo "$(dirname "$0")/../.venv/bin/python")"
PORT="${CANDOR_PG_PORT:-$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
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
printf '%s' "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c fsync=off" > "$DIR/start.opts"
as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 -o "$(cat "$DIR/start.opts")" start >&2
PGPASSWORD="$PASS" "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U candor candor_test >&2
echo "started PostgreSQL in $DIR (stop: $0 --stop $DIR)" >&2
echo "postgresql://candor:${PASS}@127.0.0.1:${PORT}/candor_test"
