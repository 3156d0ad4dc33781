#!/usr/bin/env bash
# The two quickstart commands (README):
#   scripts/dev.sh up     install what is missing, start NATS + MariaDB and the six services; Ctrl-C stops all
#   scripts/dev.sh test   install what is missing, start the stack if it is not running, run the whole suite
# Both work on a fresh Debian/Ubuntu machine with Node >= 20 (apt-get needs root or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SERVICES=(vault adn-gateway store artifacts coordinator billing)

log() { printf '[dev %(%T)T] %s\n' -1 "$*" >&2; }

ensure_node() {
  command -v node >/dev/null || { log "Node.js >= 20 is required (https://nodejs.org)"; exit 1; }
  local major; major=$(node -p 'process.versions.node.split(".")[0]')
  ((major >= 20)) || { log "Node.js >= 20 is required, found $(node --version)"; exit 1; }
}

ensure_deps() {
  # npm ci when node_modules is missing or older than the lockfile.
  if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
    log "installing npm dependencies (npm ci)"
    npm ci --no-audit --no-fund --loglevel=error
  fi
}

stack_env() {
  set -a
  eval "$(bash scripts/stack.sh env)"
  set +a
}

stack_running() { [[ $(bash scripts/stack.sh status) == $'nats up\nmariadb up' ]]; }

cmd_test() {
  ensure_node
  ensure_deps
  local started=0
  if ! stack_running; then
    bash scripts/stack.sh install
    bash scripts/stack.sh start
    started=1
  fi
  stack_env
  local rc=0 report
  report=$(mktemp)
  npx vitest run --config test/vitest.config.ts --reporter=default --reporter=json --outputFile.json="$report" "$@" || rc=$?
  # One plain closing line that any CI log reader understands.
  node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (r.numPendingTests ? `, ${r.numPendingTests} skipped` : ""));' "$report" || true
  rm -f "$report"
  ((started == 0)) || bash scripts/stack.sh stop
  return $rc
}

cmd_up() {
  ensure_node
  ensure_deps
  bash scripts/stack.sh install
  bash scripts/stack.sh start
  stack_env
  npx tsx scripts/migrate.ts
  local logs=${MALHA_STACK_DIR:-/tmp/malha-stack}/logs pids=()
  mkdir -p "$logs"
  stop_all() {
    trap - INT TERM EXIT
    log "stopping services"
    ((${#pids[@]})) && kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
    bash scripts/stack.sh stop
  }
  trap stop_all INT TERM EXIT
  for name in "${SERVICES[@]}"; do
    GRPC_HOST=127.0.0.1 METRICS_HOST=127.0.0.1 SHUTDOWN_DRAIN_SECONDS=0 \
      node --import tsx "services/$name/main.ts" >"$logs/$name.log" 2>&1 &
    pids+=($!)
  done
  if ! npx tsx scripts/mesh-status.ts --wait 60; then
    log "not every service became SERVING; logs are in $logs"
    exit 1
  fi
  cat <<MSG

Malha is up. Try:
  npx buf curl --protocol grpc --http2-prior-knowledge --list-services http://127.0.0.1:50053
  npx buf curl --protocol grpc --http2-prior-knowledge -d '{}' http://127.0.0.1:50053/grpc.health.v1.Health/Check
Logs: $logs/<service>.log   Environment: $(bash scripts/stack.sh env | tr '\n' ' ')
Press Ctrl-C to stop everything.
MSG
  wait -n "${pids[@]}" || true
  log "a service exited; see $logs"
}

case ${1:-} in
  up) cmd_up ;;
  test) shift; cmd_test "$@" ;;
  *) echo "usage: $0 up|test [vitest args]" >&2; exit 2 ;;
esac
