import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  target: 'es2022',
  sourcemap: true,
  clean: true,
  // src/contract.ts pulls the private contract in by relative path, so its code and types are
  // bundled; @ts-rest/core and zod stay external dependencies. The option below is a guard in case
  // anything imports the package name directly.
  noExternal: ['@pigeon/contract'],
  // The declarations name only the plain wire types of src/types.ts (generated from the contract by
  // scripts/generate-types.mjs); `@internal` members (the transport's contract-typed `call`) are left
  // out, so a customer's tsc loads neither zod's nor ts-rest's declarations (README, "Type-check cost").
  dts: { compilerOptions: { stripInternal: true } },
  // esbuild renames a class that refers to itself (PigeonError's static factories) to `_PigeonError`;
  // keep the names users see in stack traces and `err.constructor.name`.
  keepNames: true,
  // Keep `node:` on the one lazily imported Node module (src/upload.ts), so it cannot be mistaken
  // for an npm package (or polyfilled) by a browser bundler.
  removeNodeProtocol: false,
});
