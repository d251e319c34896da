# Sourced by the project's scripts: puts a pnpm of the pinned major version on PATH.
# A machine with only Node + npm gets pnpm installed into .cache/pnpm (no root, no global install).
QUIVER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PNPM_VERSION="10.34.9"
export QUIVER_ROOT PNPM_VERSION

if ! command -v pnpm >/dev/null 2>&1 || [[ "$(pnpm --version 2>/dev/null)" != 10.* ]]; then
  local_pnpm="$QUIVER_ROOT/.cache/pnpm"
  if [[ ! -x "$local_pnpm/node_modules/.bin/pnpm" ]]; then
    echo "› installing pnpm@$PNPM_VERSION into .cache/pnpm" >&2
    npm install --silent --no-save --no-package-lock --prefix "$local_pnpm" "pnpm@$PNPM_VERSION" >&2
  fi
  export PATH="$local_pnpm/node_modules/.bin:$PATH"
fi
export PATH="$QUIVER_ROOT/node_modules/.bin:$PATH"
# turbo: no telemetry, no update notices in CI logs.
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 TURBO_NO_UPDATE_NOTIFIER=1
