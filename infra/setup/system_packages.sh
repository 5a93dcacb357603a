#!/usr/bin/env bash
# The Debian packages the test suite needs beyond Python 3.11, gcc and git: Chromium, which the
# console's browser tests drive (never a downloaded browser build), and Node.js 20 or later, which
# runs the TypeScript SDK's tests (clients/typescript: nothing to build or fetch). Installed when missing and
# this user may install packages (root, or sudo without a password); otherwise it stops at once
# with the command to run. Called by `make test` (and so by .ci/run).
set -euo pipefail

chromium="${MIRIX_CHROMIUM:-/usr/bin/chromium}"  # another path only to test this script
packages=()
[ -x "$chromium" ] || packages+=(chromium)
node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
[ "$(node_major)" -ge 20 ] || packages+=(nodejs)
[ "${#packages[@]}" -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "The test suite needs ${packages[*]} (/usr/bin/chromium) and this machine has no apt-get;" \
        "install it with the system's package manager, then run make test again." >&2
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    runner=(env)
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    runner=(sudo env)
else
    echo "The test suite needs the Debian package(s) ${packages[*]}, and this user cannot install packages." >&2
    echo "Run this as a user who can, then make test again:" >&2
    echo "    sudo sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${packages[*]}'" >&2
    exit 1
fi
echo "Installing ${packages[*]} (for the test suite)"
"${runner[@]}" apt-get update -qq
"${runner[@]}" DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}"
if [ "$(node_major)" -lt 20 ]; then
    echo "The TypeScript SDK's tests need Node.js 20 or later and this system's nodejs package is older;" \
        "install Node.js 20+ (e.g. from the NodeSource repository), then run make test again." >&2
    exit 1
fi
