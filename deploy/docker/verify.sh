#!/usr/bin/env bash
# Checks the Docker recipe without a container runtime (CI's container has none that can run a
# container; deploy/README.md, "Docker", says why): runs build-steps.sh, the image's whole build, on
# the host in a copy of the checkout's tracked files, and checks compose.yaml with Debian's
# docker-compose (installed here when missing, as root). Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The Dockerfile's `COPY . .` then `RUN build-steps.sh` (tracked files only: no node_modules, no dist).
git ls-files -z | tar --null -T - -cf - | tar -C "$tmp" -xf -
bash deploy/docker/build-steps.sh "$tmp"
test ! -e "$tmp/node_modules/vitest" # the devDependencies are gone

if ! command -v docker-compose >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker-compose >/dev/null 2>&1 \
    || { apt-get update >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker-compose >/dev/null 2>&1; }
fi
sed "s/CHANGE-ME-openssl-rand-hex-32/$(node -p 'require("crypto").randomBytes(32).toString("hex")')/" \
  deploy/docker/pigeon.env.example >"$tmp/compose.env"
docker-compose --env-file "$tmp/compose.env" -f deploy/docker/compose.yaml --profile prometheus config -q
services=$(docker-compose --env-file "$tmp/compose.env" -f deploy/docker/compose.yaml --profile prometheus config --services | sort | tr '\n' ' ')
[ "$services" = "migrate pigeon postgres prometheus " ] || { echo "compose.yaml services: $services" >&2; exit 1; }
echo "compose.yaml: valid (docker-compose $(docker-compose version --short)), services: $services"
