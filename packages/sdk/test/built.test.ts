import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// Not a string literal, so typechecking does not need dist/ to exist yet.
const dist = (file: string) => new URL(`../dist/${file}`, import.meta.url);

describe('built package', () => {
  it('exports Pigeon and PigeonError from the ESM build', async () => {
    const esm = await import(dist('index.js').href);
    expect(typeof esm.Pigeon).toBe('function');
    expect(typeof esm.PigeonError).toBe('function');
    expect(new esm.PigeonError({ status: 0, code: 'X', message: 'x' })).toBeInstanceOf(Error);
    // Named as written, not esbuild's `_PigeonError` for a class that refers to itself.
    expect(esm.PigeonError.name).toBe('PigeonError');
    expect(new esm.PigeonError({ status: 0, code: 'X', message: 'x' }).constructor.name).toBe('PigeonError');
  });

  it('exports the contract’s permission table, so a UI offers what the API allows', async () => {
    const esm = await import(dist('index.js').href);
    expect(esm.PERMISSIONS['project.manage']).toEqual(['OWNER', 'ADMIN']);
    expect(esm.permits('project.use', 'MEMBER')).toBe(true);
    expect(esm.permits('project.manage', 'MEMBER')).toBe(false);
    expect(esm.permits('project.own', 'ADMIN')).toBe(false);
    expect(esm.EXECUTION_STATUSES).toContain('WAITING');
  });

  it('exports Pigeon and PigeonError from the CJS build', () => {
    const cjs = createRequire(import.meta.url)('../dist/index.cjs');
    expect(typeof cjs.Pigeon).toBe('function');
    expect(typeof cjs.PigeonError).toBe('function');
    expect(new cjs.Pigeon({ apiKey: 'sk_x' }).system.health).toBeTypeOf('function');
  });

  it('ships self-contained type declarations', () => {
    for (const file of ['index.d.ts', 'index.d.cts']) {
      expect(existsSync(dist(file))).toBe(true);
      const types = readFileSync(dist(file), 'utf8');
      expect(types).not.toContain('@pigeon/contract');
      expect(types).toMatch(/export \{[^}]*\bPigeon\b/);
    }
  });

  it('keeps its declarations small (≤ 3 KB a route) and free of zod and ts-rest types', async () => {
    const bytes = readFileSync(dist('index.d.ts')).length;
    // The declarations grow with the API (117 routes: 0.8 KB each); a wire type spelled out in every
    // method instead of named once in src/types.ts would add tens of KB at once.
    const routes = countRoutes((await import('@pigeon/contract')).contract);
    expect(routes).toBeGreaterThan(100);
    expect(bytes).toBeLessThanOrEqual(routes * 3 * 1024);
    const types = readFileSync(dist('index.d.ts'), 'utf8');
    // Plain types only (generated into src/types.ts): a customer's tsc loads no other package's
    // declarations and instantiates no inferred zod or ts-rest type (README, "Type-check cost").
    expect(types).not.toMatch(/^import\b/m);
    expect(types).not.toMatch(/\bz\.|Zod|AppRoute|ClientInfer/);
    // The error envelope is declared once; methods refer to wire types by name.
    expect(types.match(/success: false;/g)).toHaveLength(1);
    expect(types).toMatch(
      /timeseries: \(query\?: TimeseriesQuery, options\?: RequestOptions\) => Promise<Timeseries>;/,
    );
    expect(types).toMatch(/image: \(file: UploadSource, options\?: ImageUploadOptions\) => Promise<UploadedImage>;/);
  });
});

const countRoutes = (router: object): number =>
  Object.values(router).reduce<number>(
    (n, v) => n + (v && typeof v === 'object' ? ('method' in v && 'path' in v ? 1 : countRoutes(v)) : 0),
    0,
  );

/** `import('x')` specifiers, skipping comments such as `/* webpackIgnore: true *\/` inside the parentheses. */
const dynamicImports = (code: string) =>
  [...code.matchAll(/\bimport\((?:\s|\/\*[\s\S]*?\*\/)*['"]([^'"]+)['"]/g)].map((m) => m[1]);

describe('browser safety', () => {
  it('has no node: imports or Node globals in src, except one lazy import of node:fs/promises', () => {
    const src = new URL('../src/', import.meta.url);
    const lazyImports: string[] = [];
    for (const file of readdirSync(src).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
      const code = readFileSync(new URL(file, src), 'utf8');
      expect(code, file).not.toMatch(/from ['"]node:|require\(|\bprocess\.|\bBuffer\b/);
      for (const specifier of dynamicImports(code)) lazyImports.push(`${file}: ${specifier}`);
    }
    // contacts.import loads it only when given a file path (Node only).
    expect(lazyImports).toEqual(['upload.ts: node:fs/promises']);
  });

  it('imports only its dependencies statically in the ESM build', () => {
    const code = readFileSync(dist('index.js'), 'utf8');
    const staticImports = new Set([...code.matchAll(/^import\b[^;]*?from ['"]([^'"]+)['"]/gm)].map((m) => m[1]));
    expect([...staticImports].sort()).toEqual(['@ts-rest/core', 'uuidv7', 'zod']);
    expect(dynamicImports(code)).toEqual(['node:fs/promises']);
  });
});
