#!/usr/bin/env bash
# The two quickstart commands (README):
#   scripts/dev.sh up     install what is missing, start NATS + MariaDB, the ADN simulator and the
#                         services (the console's web app built first), sync the demo municipalities, leave
#                         it running; Ctrl-C or SIGTERM (to this script, or to the `npm start` that execs it)
#                         stops all
#                         (--exit-when-synced: stop once the demo is synced; the quickstart test uses it)
#   scripts/dev.sh test   install what is missing, start the stack if it is not running, run the whole suite
# Both work on a fresh Debian/Ubuntu machine with Node >= 20 (apt-get needs root or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SERVICES=(vault adn-gateway store artifacts coordinator billing console danfse)

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

# Runs a step as a child and waits for it with `wait`, which a signal interrupts (bash runs a trap only
# after a foreground command ends: a SIGTERM during the demo's sync would otherwise wait for the sync).
in_foreground() {
  local rc=0
  "$@" &
  fg_pid=$!
  wait "$fg_pid" || rc=$?
  fg_pid=
  return $rc
}

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
  local exit_when_synced=0
  [[ ${1:-} == --exit-when-synced ]] && exit_when_synced=1
  ensure_node
  ensure_deps
  bash scripts/stack.sh install
  # Globals, not locals: the EXIT trap runs after this function has returned.
  started_stack=0
  pids=()
  stack_running || started_stack=1
  bash scripts/stack.sh start >/dev/null
  stack_env
  local dir=${MALHA_STACK_DIR:-/tmp/malha-stack}
  # The logs live beside the stack directory, not in it: stopping removes the stack, and the logs are
  # what one reads after a stop (or a crash) to learn why. Each start begins them anew.
  local dev=$dir/dev sim_certs=$dir/adn-sim
  logs=${MALHA_LOG_DIR:-$dir-logs}
  mkdir -p "$logs"
  rm -f "$logs"/*.log
  local municipios=${MALHA_DEMO_MUNICIPIOS:-3550308,3304557,4106902}
  mkdir -p "$dev" "$logs"
  chmod 700 "$dev"
  # Development secrets: random, made once per stack directory, never committed.
  (
    umask 077
    [[ -s $dev/master.key ]] || head -c 32 /dev/urandom | base64 >"$dev/master.key"
    [[ -s $dev/vault-secret ]] || head -c 24 /dev/urandom | base64 >"$dev/vault-secret"
    [[ -s $dev/vault-admin-secret ]] || head -c 24 /dev/urandom | base64 >"$dev/vault-admin-secret"
    [[ -s $dev/link-secret ]] || head -c 32 /dev/urandom | base64 >"$dev/link-secret"
    # A billing API token for the tenant "demo" (bapi_ + 32 random bytes, base64url); billing holds its digest.
    if [[ ! -s $dev/billing-token-demo ]]; then
      printf 'bapi_%s' "$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')" >"$dev/billing-token-demo"
      printf 'demo %s\n' "$(sha256sum <"$dev/billing-token-demo" | cut -d' ' -f1)" >"$dev/billing-tenant-tokens"
    fi
    # The console: a session key and one administrator, "dev", whose token is printed at the end.
    [[ -s $dev/console-session-secret ]] || head -c 32 /dev/urandom | base64 >"$dev/console-session-secret"
    [[ -s $dev/console-token-dev ]] || head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' >"$dev/console-token-dev"
    # "dev" sees every billing tenant the console knows: the demo tenant, with its API token.
    printf 'dev admin %s tenants=*\n' "$(sha256sum <"$dev/console-token-dev" | cut -d' ' -f1)" >"$dev/console-users"
    printf 'demo %s\n' "$(cat "$dev/billing-token-demo")" >"$dev/console-billing-tenants"
    chmod 600 "$dev/console-billing-tenants"
  )
  export NFSE_MASTER_KEY_FILE=$dev/master.key VAULT_CREDENTIALS_SECRET_FILE=$dev/vault-secret
  # The vault's administrator secret: read by the vault, and by the demo and the CLI that import certificates.
  export VAULT_ADMIN_SECRET_FILE=$dev/vault-admin-secret MALHA_VAULT_ADMIN_SECRET_FILE=$dev/vault-admin-secret
  export ARTIFACT_LINK_SECRET_FILE=$dev/link-secret ARTIFACT_DIR=$dir/artifacts
  # Billing authenticates tenants by API token; the CLI sends the demo tenant's.
  export BILLING_TENANT_TOKENS_FILE=$dev/billing-tenant-tokens MALHA_BILLING_TOKEN_FILE=$dev/billing-token-demo
  export CONSOLE_SESSION_SECRET_FILE=$dev/console-session-secret CONSOLE_USERS_FILE=$dev/console-users
  export CONSOLE_VAULT_ADMIN_SECRET_FILE=$dev/vault-admin-secret
  export CONSOLE_BILLING_TENANTS_FILE=$dev/console-billing-tenants
  export GRPC_HOST=127.0.0.1 METRICS_HOST=127.0.0.1 SHUTDOWN_DRAIN_SECONDS=0
  export ADN_BASE_URL_PRODUCAO_RESTRITA=https://127.0.0.1:14443 ADN_CA_FILE=$sim_certs/ca.pem
  fg_pid=

  stop_all() {
    trap - INT TERM EXIT
    log "stopping the mesh"
    local all=("${pids[@]}" ${fg_pid:+"$fg_pid"})
    ((${#all[@]})) && kill -TERM "${all[@]}" 2>/dev/null || true
    wait "${all[@]}" 2>/dev/null || true
    ((started_stack == 0)) || bash scripts/stack.sh stop
    log "stopped; logs kept in $logs"
  }
  # A signal stops everything and ends the script (a trap alone would let it carry on after `wait`).
  trap 'stop_all; exit 130' INT
  trap 'stop_all; exit 143' TERM
  trap stop_all EXIT

  # The ADN simulator stands in for the real ADN: HTTPS + mTLS with a fresh test PKI in $sim_certs.
  node --import tsx tools/adn-sim/main.ts --municipios "$municipios" --certs-dir "$sim_certs" \
    --feed-size "${MALHA_DEMO_FEED_SIZE:-1500}" >"$logs/adn-sim.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 200); do grep -q '"adminUrl"' "$logs/adn-sim.log" 2>/dev/null && break; sleep 0.1; done
  grep -q '"adminUrl"' "$logs/adn-sim.log" || { log "the ADN simulator did not start; see $logs/adn-sim.log"; exit 1; }

  in_foreground npx tsx scripts/migrate.ts
  log "building the console's web app (dist/console)"
  in_foreground npm run -s build:console
  for name in "${SERVICES[@]}"; do
    # Each service's own V8 flags (NODE_FLAGS in libs/rpc/mesh.ts; test/repo/node-flags.test.ts keeps this in step).
    local flags=()
    [[ $name == store ]] && flags=(--max-old-space-size=2048)
    [[ $name == adn-gateway ]] && flags=(--max-old-space-size=2048)
    [[ $name == coordinator ]] && flags=(--max-old-space-size=256)
    [[ $name == danfse ]] && flags=(--max-semi-space-size=2)
    # And its allocator settings (MALLOC_ENV in libs/rpc/mesh.ts, the same test).
    local menv=()
    [[ $name == store ]] && menv=(MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072)
    env "${menv[@]}" node "${flags[@]}" --import tsx "services/$name/main.ts" >"$logs/$name.log" 2>&1 &
    pids+=($!)
  done
  if ! in_foreground npx tsx scripts/mesh-status.ts --wait 60; then
    log "not every service became SERVING; logs are in $logs"
    # The reason is usually one line at the end of a log (a config error, a port already in use).
    for name in "${SERVICES[@]}"; do
      printf -- '--- %s (last lines of %s)\n' "$name" "$logs/$name.log"
      tail -n 3 "$logs/$name.log" 2>/dev/null | cut -c1-400
    done
    exit 1
  fi
  in_foreground npx tsx scripts/demo.ts "$sim_certs" "$municipios"
  if ((exit_when_synced)); then return 0; fi
  cat <<MSG

Malha is up, with the demo municipalities ($municipios) synced from the ADN simulator. Try:
  npx buf curl --protocol grpc --http2-prior-knowledge -d '{}' http://127.0.0.1:50055/malha.coordinator.v1.CoordinatorService/ListFeedStatus
  npx buf curl --protocol grpc --http2-prior-knowledge -d '{"ibge":"3550308","pageSize":3}' http://127.0.0.1:50053/malha.store.v1.StoreService/ListDocuments
  mariadb -h127.0.0.1 -P${MALHA_MYSQL_PORT:-33306} -umalha -pmalha malha -e 'SELECT nsu, chave, situacao FROM nfse_documentos_3550308 LIMIT 5'
  MALHA_VAULT_ADMIN_SECRET_FILE=$dev/vault-admin-secret npx tsx cli/main.ts certificates import <ibge> <file.pfx>
  MALHA_BILLING_TOKEN_FILE=$dev/billing-token-demo npx tsx cli/main.ts billing jobs create lote.json --wait   # tenant "demo"
  npx tsx cli/main.ts documents danfse 3550308 <chave> --out nota.pdf   # or --from 2026-01-01 --to 2026-12-31 --out notas.zip
Console: http://127.0.0.1:8057   user: dev   token: $(cat "$dev/console-token-dev")
Logs: $logs/<service>.log (kept after stopping)   Simulator admin: http://127.0.0.1:14480/admin/counters
Environment: $(bash scripts/stack.sh env | tr '\n' ' ')
Press Ctrl-C to stop everything.
MSG
  wait -n "${pids[@]}" || true
  log "a process exited; see $logs"
}

case ${1:-} in
  up) shift; cmd_up "$@" ;;
  test) shift; cmd_test "$@" ;;
  *) echo "usage: $0 up|test [vitest args]" >&2; exit 2 ;;
esac
