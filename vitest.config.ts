import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// .ci/run's self-check runs the suite's own command on one deliberately failing file (and nothing
// else) to prove a failing test makes the command exit non-zero.
const selfCheck = process.env.PIGEON_TEST_SELF_CHECK === '1';
const include = selfCheck
  ? ['.ci/self-check/*.check.ts']
  : ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'examples/**/*.test.ts'];

export default defineConfig({
  resolve: {
    alias: {
      '@pigeon/contract/openapi': src('./packages/contract/src/openapi.ts'),
      '@pigeon/contract/compat': src('./packages/contract/src/compat.ts'),
      '@pigeon/contract': src('./packages/contract/src/index.ts'),
    },
  },
  test: {
    include,
    globalSetup: ['packages/server/test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
