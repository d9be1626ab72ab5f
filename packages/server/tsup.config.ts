import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { cli: 'src/cli.ts', index: 'src/index.ts', bench: 'src/bench-exports.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  clean: true,
  // The contract is bundled in; every npm dependency stays external.
  noExternal: ['@pigeon/contract'],
});
