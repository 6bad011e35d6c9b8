#!/usr/bin/env bash
# install-code-server.sh [DEST] -- a real VS Code for the smoke test: code-server (VS Code
# server + web workbench) from the npm registry, plus Debian's Chromium to drive it.
# Idempotent: a working install of the pinned version is reused (about 0.1 s).
# Prints the code-server binary on the last line of stdout; logs go to stderr.
#
# Why not a plain `npm install code-server`: its postinstall refuses root without
# npm_config_unsafe_perm, builds native modules (kerberos needs libkrb5-dev), and
# @vscode/ripgrep downloads rg from GitHub, which is not reachable. So we install with
# --ignore-scripts and do the postinstall's work by hand, with Debian's ripgrep.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
DEST="${1:-$REPO/.cache/code-server}"
VER="${CODE_SERVER_VERSION:-4.100.3}"   # the last release whose engines.node is 20
BIN="$DEST/node_modules/.bin/code-server"
export DEBIAN_FRONTEND=noninteractive npm_config_yes=true npm_config_update_notifier=false

log() { echo "install-code-server: $*" >&2; }

apt_install() {
  # A stale package list is the usual failure on a fresh machine: update once and retry.
  apt-get install -y -q --no-install-recommends "$@" >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "$@" >/dev/null; }
}

need_pkgs=()
command -v chromium >/dev/null || need_pkgs+=(chromium)
command -v rg >/dev/null || need_pkgs+=(ripgrep)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_pkgs+=(libkrb5-dev)
if [ "${#need_pkgs[@]}" -gt 0 ]; then
  log "apt-get install ${need_pkgs[*]}"
  apt_install "${need_pkgs[@]}"
fi

mkdir -p "$DEST"
exec 9>"$DEST/.lock"
flock 9   # parallel runs on one folder wait for each other

installed_version() {
  local home; home="$(mktemp -d)"   # keep --version from writing ~/.config/code-server
  HOME="$home" XDG_CONFIG_HOME="$home" XDG_DATA_HOME="$home" "$BIN" --version 2>/dev/null \
    | sed -n 's/^\([0-9][0-9.]*\) .*/\1/p' | head -n1
  rm -rf "$home"
}

if [ -x "$BIN" ] && [ -f "$DEST/.complete" ] && [ "$(installed_version)" = "$VER" ]; then
  log "code-server $VER already installed in $DEST"
  echo "$BIN"
  exit 0
fi

log "installing code-server $VER into $DEST (a few minutes)"
rm -f "$DEST/.complete"
cd "$DEST"
[ -f package.json ] || echo '{"name":"ragls-code-server","private":true}' >package.json
npm install --no-audit --no-fund --ignore-scripts "code-server@$VER" >&2
npm rebuild argon2 >&2                    # its prebuilt download fails, node-gyp builds it

cd node_modules/code-server/lib/vscode
npm install --no-audit --no-fund --omit=dev --ignore-scripts >&2
npm rebuild @vscode/spdlog kerberos native-watchdog node-pty @vscode/deviceid >&2
mkdir -p node_modules/@vscode/ripgrep/bin
ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
# The rest of code-server's postinstall.sh.
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
(cd extensions && npm install --no-audit --no-fund --omit=dev --ignore-scripts >&2)

got="$(installed_version)"
if [ "$got" != "$VER" ]; then
  log "ERROR: code-server does not run after install (version '$got', wanted $VER)"
  exit 1
fi
touch "$DEST/.complete"
log "installed code-server $VER"
echo "$BIN"
