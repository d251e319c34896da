#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, lint, type check, every package's tests,
# and the publishability check. Ends with one summary line: "N passed, N failed".
set -uo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
bash "$here/setup.sh" || { echo "set-up failed"; exit 1; }
source "$here/env.sh"
cd "$QUIVER_ROOT"

status=0
step() {
  local name="$1"; shift
  echo "━━ $name"
  if ! "$@"; then echo "✗ $name failed"; status=1; fi
}

rm -rf packages/*/test-results apps/*/test-results
step lint pnpm exec turbo run lint --continue --output-logs=errors-only
step typecheck pnpm exec turbo run typecheck --continue --output-logs=errors-only
step tests pnpm exec turbo run test --concurrency=1 --continue --output-logs=full
step publishability node tooling/scripts/check-publish.mjs
node tooling/scripts/summarize-tests.mjs || status=1
exit $status
