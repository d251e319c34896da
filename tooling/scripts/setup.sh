#!/usr/bin/env bash
# One-step set-up for a machine with Node 20+ and npm: pnpm, the Debian packages the tools
# need, the workspace's dependencies (including native builds), and a build of every package.
# Safe to run again: each step is skipped when already done.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$QUIVER_ROOT"

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if (( node_major < 20 )); then
  echo "Quiver needs Node.js 20 or newer (found $(node --version))." >&2
  exit 1
fi

# --- Debian packages -------------------------------------------------------------------------
missing=()
while read -r pkg; do
  [[ -z "$pkg" || "$pkg" == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done < tooling/scripts/system-packages.txt
if (( ${#missing[@]} > 0 )); then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "› not a Debian/Ubuntu system: install the equivalents of: ${missing[*]}" >&2
  else
    sudo=""
    if (( EUID != 0 )); then
      if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
        echo "› missing system packages: ${missing[*]}; run as root: apt-get install -y ${missing[*]}" >&2
        exit 1
      fi
    fi
    echo "› installing Debian packages: ${missing[*]}" >&2
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
fi

# --- JavaScript dependencies and build ------------------------------------------------------------
echo "› pnpm install" >&2
if [[ -n "${CI:-}" ]]; then
  pnpm install --frozen-lockfile --reporter=append-only >&2
else
  pnpm install --prefer-offline --reporter=append-only >&2
fi
echo "› building packages" >&2
pnpm exec turbo run build --output-logs=errors-only >&2
