#!/usr/bin/env bash
# Throwaway local infrastructure for development and CI: nats-server with JetStream and MariaDB with
# MySQL 5.6-like settings, both on loopback, both living in one temporary directory.
#   usage: scripts/stack.sh install|start|stop|env|status
# install needs root (or sudo) and only runs apt-get when a binary is missing. start is idempotent and
# prints the environment to use (NATS_URL, MYSQL_URL) on stdout; everything else goes to stderr.
set -euo pipefail

STACK_DIR=${MALHA_STACK_DIR:-/tmp/malha-stack}
NATS_PORT=${MALHA_NATS_PORT:-14222}
NATS_MON_PORT=${MALHA_NATS_MON_PORT:-18222}
MYSQL_PORT=${MALHA_MYSQL_PORT:-33306}
MYSQL_SOCK=$STACK_DIR/mysql/mysqld.sock
DB_USER=malha
DB_PASS=malha
DB_NAME=malha

log() { printf '[stack %(%T)T] %s\n' -1 "$*" >&2; }
alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

install() {
  local need=()
  command -v nats-server >/dev/null || need+=(nats-server)
  command -v mariadbd >/dev/null || need+=(mariadb-server-core)
  command -v mariadb >/dev/null || need+=(mariadb-client-core)
  command -v curl >/dev/null || need+=(curl)
  # Test tool: renders PDFs to PNG so tests can decode the printed barcodes.
  command -v pdftoppm >/dev/null || need+=(poppler-utils)
  # Test tool: `promtool check metrics` lints every service's /metrics (the package ships it; its
  # Prometheus server is not started by the install).
  command -v promtool >/dev/null || need+=(prometheus)
  # Test tool: the console's browser tests drive Debian's chromium (playwright-core never downloads one).
  [[ -x /usr/bin/chromium ]] || need+=(chromium fonts-dejavu-core)
  if ((${#need[@]} == 0)); then log "packages present"; return; fi
  local sudo=; ((EUID == 0)) || sudo=sudo
  log "installing ${need[*]}"
  # The -core packages ship no init script, so nothing else starts on the default ports.
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

start_nats() {
  alive "$STACK_DIR/nats.pid" && return 0
  mkdir -p "$STACK_DIR/nats"
  nats-server -a 127.0.0.1 -p "$NATS_PORT" -m "$NATS_MON_PORT" -js -sd "$STACK_DIR/nats" \
    -l "$STACK_DIR/nats.log" -P "$STACK_DIR/nats.pid" </dev/null >/dev/null 2>&1 &
  for _ in $(seq 1 200); do
    if curl -sf "http://127.0.0.1:$NATS_MON_PORT/healthz?js-enabled-only=true" >/dev/null; then
      log "nats ready on $NATS_PORT"; return 0
    fi
    sleep 0.05
  done
  log "nats failed to start"; tail -20 "$STACK_DIR/nats.log" >&2; return 1
}

start_mysql() {
  local d=$STACK_DIR/mysql user=()
  alive "$d/mysqld.pid" && return 0
  mkdir -p "$d"
  ((EUID == 0)) && user=(--user=root)
  if [[ ! -d $d/data/mysql ]]; then
    mariadb-install-db --no-defaults "${user[@]}" --datadir="$d/data" --skip-test-db \
      --auth-root-authentication-method=socket >"$d/install.log" 2>&1
  fi
  # 5.6-like: strict trans tables only, COMPACT rows (767-byte index prefix), implicit TIMESTAMP defaults.
  mariadbd --no-defaults "${user[@]}" --datadir="$d/data" --socket="$MYSQL_SOCK" --pid-file="$d/mysqld.pid" \
    --port="$MYSQL_PORT" --bind-address=127.0.0.1 --skip-name-resolve --log-error="$d/error.log" \
    --innodb-buffer-pool-size=2G --innodb-log-file-size=512M --innodb-flush-log-at-trx-commit=2 \
    --max-allowed-packet=64M --max-connections=500 \
    --table-open-cache=24576 --table-definition-cache=16384 --innodb-open-files=16384 --open-files-limit=65535 \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci \
    --sql-mode=STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION \
    --innodb-default-row-format=compact --explicit-defaults-for-timestamp=OFF </dev/null >/dev/null 2>&1 &
  for _ in $(seq 1 600); do
    if mariadb --no-defaults -S "$MYSQL_SOCK" -uroot -e 'select 1' >/dev/null 2>&1; then
      # The server lowers table_open_cache at start to half the process's file limit (9,735 where the hard
      # limit is 20000) although an InnoDB table in that cache holds no descriptor (innodb_open_files bounds
      # those): raised again here, so that a fleet's 11,140 tables stay open, some of them twice
      # (docs/domain/mysql56.md §6, decision 0065).
      # The app user may create databases named malha or malha_* (tests use one database each).
      mariadb --no-defaults -S "$MYSQL_SOCK" -uroot -e "
        SET GLOBAL table_open_cache = GREATEST(@@table_open_cache, 24576);
        CREATE DATABASE IF NOT EXISTS $DB_NAME CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
        CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
        GRANT ALL ON \`$DB_NAME\`.* TO '$DB_USER'@'127.0.0.1';
        GRANT ALL ON \`${DB_NAME}\\_%\`.* TO '$DB_USER'@'127.0.0.1';"
      log "mariadb ready on $MYSQL_PORT"; return 0
    fi
    sleep 0.05
  done
  log "mariadb failed to start"; tail -20 "$d/error.log" >&2; return 1
}

stop_pidfile() {
  local f=$1 pid
  alive "$f" || return 0
  pid=$(cat "$f"); kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

print_env() {
  echo "NATS_URL=nats://127.0.0.1:$NATS_PORT"
  echo "MYSQL_URL=mysql://$DB_USER:$DB_PASS@127.0.0.1:$MYSQL_PORT/$DB_NAME"
}

case ${1:-} in
  install) install ;;
  start)
    start_nats & n=$!; start_mysql & m=$!
    rc=0; wait $n || rc=1; wait $m || rc=1
    ((rc == 0)) && { log "environment to use:"; print_env; }
    exit $rc ;;
  stop)
    stop_pidfile "$STACK_DIR/nats.pid" & stop_pidfile "$STACK_DIR/mysql/mysqld.pid" & wait
    [[ ${KEEP:-0} == 1 ]] || rm -rf "$STACK_DIR"
    log "stopped" ;;
  env) print_env ;;
  status)
    alive "$STACK_DIR/nats.pid" && echo "nats up" || echo "nats down"
    alive "$STACK_DIR/mysql/mysqld.pid" && echo "mariadb up" || echo "mariadb down" ;;
  *) echo "usage: $0 install|start|stop|env|status" >&2; exit 2 ;;
esac
