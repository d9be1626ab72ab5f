import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

const contractSource = (entry: string) => fileURLToPath(new URL(`../contract/src/${entry}.ts`, import.meta.url));

export default defineConfig({
  entry: {
    cli: 'src/cli.ts',
    index: 'src/index.ts',
    bench: 'src/bench-exports.ts',
    'migrate-child': 'src/migrate-child.ts',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  clean: true,
  // The contract is bundled in, from its TypeScript source: starting the server never waits for the
  // contract's own build (its declarations take most of a full build). Every npm dependency stays external.
  noExternal: ['@pigeon/contract'],
  esbuildPlugins: [
    {
      name: 'contract-from-source',
      setup(build) {
        build.onResolve({ filter: /^@pigeon\/contract(\/openapi|\/compat)?$/ }, (args) => ({
          path: contractSource(args.path.split('/')[2] ?? 'index'),
        }));
      },
    },
  ],
});
