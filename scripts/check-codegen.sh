#!/usr/bin/env bash
# Fails when libs/gen differs from what `buf generate` makes of proto/ (someone edited a .proto and
# forgot to regenerate, or edited generated code by hand).
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsx scripts/protovalidate-proto.ts --check
npx buf generate
stale=$(git status --porcelain --untracked-files=all -- libs/gen)
if [[ -n $stale ]]; then
  echo "generated code is stale: run 'npm run generate' and commit libs/gen:" >&2
  echo "$stale" >&2
  exit 1
fi
echo "codegen: libs/gen is up to date"
