import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { contract, namedSchemas } from './index.js';
import { buildOpenApiDocument, flattenRoutes } from './openapi.js';

const document = buildOpenApiDocument(contract, namedSchemas, { title: 'Pigeon', version: 'test' });
type Json = Record<string, unknown>;

/** A schema says nothing when it has no type, reference, composition, enum or const. */
const SAYS_SOMETHING = ['type', '$ref', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', 'properties', 'not'];
const isEmptySchema = (schema: Json) => !SAYS_SOMETHING.some((key) => key in schema);

/** Every schema of the document with its location: response/request bodies, parameters, components. */
function topLevelSchemas(): Array<[string, Json]> {
  const found: Array<[string, Json]> = [];
  for (const [path, ops] of Object.entries(document.paths ?? {})) {
    for (const [method, op] of Object.entries(ops as Record<string, Json>)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const [status, res] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        for (const [type, media] of Object.entries((res.content ?? {}) as Record<string, Json>)) {
          found.push([`${at} ${status} ${type}`, media.schema as Json]);
        }
      }
      const body = op.requestBody as Json | undefined;
      for (const [type, media] of Object.entries((body?.content ?? {}) as Record<string, Json>)) {
        found.push([`${at} request ${type}`, media.schema as Json]);
      }
      for (const param of (op.parameters ?? []) as Json[])
        found.push([`${at} param ${param.name}`, param.schema as Json]);
    }
  }
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    found.push([`components.schemas.${name}`, schema as Json]);
  }
  return found;
}

/** Nested property schemas may be open (`{}`) only when they carry a description. */
function undocumentedOpenSchemas(schema: unknown, at: string, out: string[] = []): string[] {
  if (!schema || typeof schema !== 'object') return out;
  const s = schema as Json;
  for (const [name, prop] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
    if (isEmptySchema(prop) && !prop.description) out.push(`${at}.${name}`);
    undocumentedOpenSchemas(prop, `${at}.${name}`, out);
  }
  if (s.items) undocumentedOpenSchemas(s.items, `${at}[]`, out);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    for (const [i, inner] of ((s[key] ?? []) as Json[]).entries())
      undocumentedOpenSchemas(inner, `${at}.${key}${i}`, out);
  }
  return out;
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(document as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
  });

  it('has an operation for every route of the contract', () => {
    const routes = flattenRoutes(contract);
    expect(routes.length).toBeGreaterThan(0);
    for (const { id, route } of routes) {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const op = (document.paths?.[path] as Record<string, Json> | undefined)?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op?.operationId).toBe(id);
      expect(op?.summary, `${id} has a summary`).toBeTruthy();
    }
  });

  it('has no empty schema anywhere a body, parameter or component is described', () => {
    const schemas = topLevelSchemas();
    expect(schemas.length).toBeGreaterThan(0);
    expect(schemas.filter(([, schema]) => !schema || isEmptySchema(schema)).map(([at]) => at)).toEqual([]);
    expect(schemas.flatMap(([at, schema]) => undocumentedOpenSchemas(schema, at))).toEqual([]);
  });

  it('resolves every $ref to a component', () => {
    const refs = JSON.stringify(document).match(/"\$ref":"#\/components\/schemas\/[^"]+"/g) ?? [];
    const names = new Set(Object.keys(document.components?.schemas ?? {}));
    for (const ref of refs) expect(names).toContain(ref.split('/').pop()?.replace('"', ''));
  });

  it('names only defined security schemes', () => {
    const schemes = new Set(Object.keys(document.components?.securitySchemes ?? {}));
    for (const ops of Object.values(document.paths ?? {})) {
      for (const op of Object.values(ops as Record<string, { security?: Array<Record<string, unknown>> }>)) {
        for (const requirement of op.security ?? []) {
          for (const name of Object.keys(requirement)) expect(schemes).toContain(name);
        }
      }
    }
  });

  it('declares the error envelope on every route', () => {
    for (const { id, route } of flattenRoutes(contract)) {
      const errorStatuses = Object.keys(route.responses).filter((s) => Number(s) >= 400);
      expect(errorStatuses.length, `${id} declares error responses`).toBeGreaterThan(0);
    }
  });
});
