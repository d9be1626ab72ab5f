#!/usr/bin/env bash
# Checks the systemd recipe without a running systemd (CI runs in a container whose PID 1 is not
# systemd): `systemd-analyze verify` loads each unit as systemd would (unknown keys, bad values,
# dependencies, the ExecStart binary), `systemd-analyze security --offline` scores the hardening,
# and pigeon.env.example is loaded by Pigeon's own configuration code. Run by .ci/run, after the
# build. Needs systemd-analyze (Debian package systemd; installed here when missing, as root) and node.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
if ! command -v systemd-analyze >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends systemd >/dev/null 2>&1 \
    || { apt-get update >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends systemd >/dev/null 2>&1; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The units name /usr/bin/node and /opt/pigeon; here they are this machine's node and this checkout.
node_bin=$(command -v node)
for unit in deploy/systemd/*.service deploy/systemd/*.target; do
  sed -e "s#/usr/bin/node#${node_bin}#g" -e "s#/opt/pigeon#${repo}#g" "$unit" >"$tmp/$(basename "$unit")"
done
test -f packages/server/dist/cli.js || { echo "verify: build first (packages/server/dist/cli.js is missing)" >&2; exit 1; }

units=("$tmp"/pigeon.target "$tmp"/pigeon-migrate.service "$tmp"/pigeon-api.service "$tmp"/pigeon-worker@.service)
# verify exits non-zero on errors only; a warning (an unknown or misspelt key) fails this check too.
out=$(cd "$tmp" && systemd-analyze verify --man=no "${units[@]}" 2>&1) || { echo "$out" >&2; exit 1; }
if [ -n "$out" ]; then echo "$out" >&2; echo "verify: systemd-analyze verify warned" >&2; exit 1; fi
echo "systemd-analyze verify: ${#units[@]} units, no error or warning"
for unit in pigeon-migrate.service pigeon-api.service pigeon-worker@.service; do
  # 10 is "UNSAFE", 0 fully locked down; these units score 1.5 ("OK"): fail when hardening is lost.
  systemd-analyze security --offline=yes --man=no --threshold=20 "$tmp/$unit" >"$tmp/security.txt" 2>&1 \
    || { cat "$tmp/security.txt" >&2; echo "verify: $unit exposure above 2.0" >&2; exit 1; }
  grep -o "Overall exposure level for .*" "$tmp/security.txt"
done

# The environment file: every name is one Pigeon reads, and with its placeholders filled in
# (secrets generated here) Pigeon's configuration accepts it for the API and the worker roles.
node --input-type=module - "$repo" <<'JS'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const repo = process.argv[2];
const schema = readFileSync(join(repo, 'packages/server/src/config/schema.ts'), 'utf8');
const { loadConfig } = await import(join(repo, 'packages/server/dist/index.js'));
const env = {};
for (const line of readFileSync(join(repo, 'deploy/systemd/pigeon.env.example'), 'utf8').split('\n')) {
  const m = /^#?\s*([A-Z][A-Z0-9_]+)=(.*)$/.exec(line);
  if (!m) continue;
  if (!new RegExp(`^  ${m[1]}: `, 'm').test(schema)) throw new Error(`pigeon.env.example: ${m[1]} is not a Pigeon setting`);
  if (!line.startsWith('#')) env[m[1]] = m[2].startsWith('CHANGE-ME-openssl') ? randomBytes(32).toString('hex') : m[2];
}
const dataDir = mkdtempSync(join(tmpdir(), 'pigeon-env-'));
try {
  for (const role of ['api', 'worker']) {
    const config = loadConfig({ ...env, PIGEON_DATA_DIR: dataDir }, role);
    if (config.http.host !== '127.0.0.1' || !config.http.publicUrl.startsWith('https://')) throw new Error('HOST/PUBLIC_URL');
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
console.log(`pigeon.env.example: ${Object.keys(env).length} settings accepted by Pigeon's configuration`);
JS
