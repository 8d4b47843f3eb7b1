#!/usr/bin/env bash
# Builds Stablegate from this checkout and installs the single binary:
#   ./install.sh                      -> /usr/local/bin/stablegate
#   PREFIX=$HOME/.local ./install.sh  -> ~/.local/bin/stablegate
# Needs Node and npm; installs Bun 1.4 from npm when it is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

BUN_VERSION=1.4.5
PREFIX=${PREFIX:-/usr/local}
TARGET="${PREFIX}/bin/stablegate"

bun_ok() {
  command -v bun >/dev/null && [[ "$(bun --version 2>/dev/null)" == 1.4.* ]]
}

# npm 11 may skip the package's postinstall, which is what puts the real binary in place; so
# check that the result runs, then retry with the script allowed, then run the script by hand.
if bun_ok; then
  echo "using bun $(bun --version) at $(command -v bun)"
else
  echo "installing bun ${BUN_VERSION} from npm"
  npm install -g --no-audit --no-fund "bun@${BUN_VERSION}"
  PATH="$(npm prefix -g)/bin:${PATH}"
  export PATH
  hash -r
  if ! bun_ok; then
    npm install -g --no-audit --no-fund --allow-scripts=bun "bun@${BUN_VERSION}"
    hash -r
  fi
  if ! bun_ok; then
    (cd "$(npm root -g)/bun" && node install.js)
    hash -r
  fi
  bun_ok || { echo "install.sh: could not install a working bun ${BUN_VERSION} from npm" >&2; exit 1; }
  echo "installed bun $(bun --version) at $(command -v bun)"
fi

echo "installing dependencies (bun install --frozen-lockfile)"
bun install --frozen-lockfile
echo "building dist/stablegate (bun run build)"
bun run build

mkdir -p "${PREFIX}/bin"
install -m 0755 dist/stablegate "$TARGET"
echo "installed ${TARGET} ($("$TARGET" version))"
echo "next: create an account with 'stablegate account create --name NAME --payout-address 0x...',"
echo "      then run 'stablegate serve' (configuration: STABLEGATE_* variables, see README.md)"
