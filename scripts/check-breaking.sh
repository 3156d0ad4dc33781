#!/usr/bin/env bash
# buf breaking, image against image (docs/domain/toolchain.md §1): the proto/ of this commit against the proto/ of the
# base commit. The base is $BUF_BREAKING_AGAINST (any git ref), else the previous commit on main.
# While the API is pre-release the findings are printed as warnings; once proto/STABLE exists they fail.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${BUF_BREAKING_AGAINST:-HEAD~1}
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
  echo "buf breaking: base '$base' is not in this clone; nothing to compare"
  exit 0
fi
if ! git cat-file -e "$base:proto" 2>/dev/null; then
  echo "buf breaking: $base has no proto/ yet; nothing to compare"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/base"
git archive "$base" proto buf.yaml | tar -x -C "$work/base"
(cd "$work/base" && "$OLDPWD/node_modules/.bin/buf" build -o "$work/base.binpb")
npx buf build -o "$work/head.binpb"
if npx buf breaking "$work/head.binpb" --against "$work/base.binpb" >"$work/report" 2>&1; then
  echo "buf breaking: no breaking change against $(git rev-parse --short "$base")"
  exit 0
fi
if [[ -f proto/STABLE ]]; then
  echo "buf breaking: FAILED against $(git rev-parse --short "$base") (proto/STABLE exists):" >&2
  cat "$work/report" >&2
  exit 1
fi
echo "buf breaking: WARNING, changes that break clients of $(git rev-parse --short "$base") (allowed while pre-release; create proto/STABLE to enforce):"
cat "$work/report"
