import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the API process at /app/ (packages/server/src/http/console.ts): hashed assets under
// /app/assets/ are cached for a year, index.html never. `pnpm dev` proxies the API to a local Pigeon.
export default defineConfig({
  base: '/app/',
  plugins: [react()],
  // The SDK from its sources (as the server bundles the contract from its own): building the console
  // never waits for the SDK's declaration build, so `pnpm start` on a fresh clone builds it in seconds.
  resolve: { alias: { '@pigeon/sdk': fileURLToPath(new URL('../sdk/src/index.ts', import.meta.url)) } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    assetsInlineLimit: 0,
    // The SDK (with the contract's schemas) is most of the first page: 166 KB gzipped of a 250 KB budget.
    chunkSizeWarningLimit: 700,
  },
  server: {
    proxy: Object.fromEntries(
      [
        '/auth',
        '/users',
        '/projects',
        '/contacts',
        '/events',
        '/domains',
        '/emails',
        '/webhook-endpoints',
        '/suppressions',
        '/config',
        '/health',
        '/uploads',
        '/templates',
        '/segments',
        '/campaigns',
        '/workflows',
        '/analytics',
        '/activity',
      ].map((path) => [path, process.env.PIGEON_URL ?? 'http://localhost:3000']),
    ),
  },
});
