#!/usr/bin/env bash
# The image's build, as one script: the Dockerfile RUNs it in /src, and .ci/run runs it on the host
# in a copy of the checkout, so the steps are proven without a container runtime. Needs Node 20+ and
# npm (pnpm comes from the npm registry), and the network to reach the npm registry.
# Usage: build-steps.sh [SOURCE_DIR]   (default: the current directory)
set -euo pipefail
cd "${1:-.}"
export CI=true   # pnpm: no prompts
pnpm() { npx -y pnpm@10 "$@"; }

pnpm install --frozen-lockfile
pnpm build
# Only what runs: devDependencies (TypeScript, vite, vitest…) go; the built dist/ folders stay.
pnpm install --frozen-lockfile --prod --config.confirmModulesPurge=false
rm -rf test-results .pigeon bench/results/*.tmp

# The result starts: the command line answers, and the console was built.
node packages/server/dist/cli.js --help >/dev/null
test -f packages/console/dist/index.html
echo "build-steps: built $(node -p 'require("./packages/server/package.json").version') in $(pwd)"
