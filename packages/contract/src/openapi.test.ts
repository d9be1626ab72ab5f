import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { contract, namedSchemas } from './index.js';
import { buildOpenApiDocument, flattenRoutes, toOpenApi30 } from './openapi.js';

const document = buildOpenApiDocument(contract, namedSchemas, { title: 'Pigeon', version: 'test' });
const document30 = toOpenApi30(document);
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

type Operation = Json & { tags?: string[]; responses: Record<string, Json>; requestBody?: Json };
const operations = (doc: { paths?: unknown }) =>
  Object.entries((doc.paths ?? {}) as Record<string, Record<string, Operation>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as const),
  );

const pathItem = (doc: { paths?: unknown }, path: string) =>
  ((doc.paths ?? {}) as Record<string, Record<string, Operation>>)[path] ?? {};

describe('what each operation tells a reader or a generator', () => {
  it('has a defined tag, a summary, a description and a 4xx response', () => {
    const tags = new Set((document.tags ?? []).map((t) => t.name));
    for (const [at, op] of operations(document)) {
      expect(op.tags?.length, at).toBe(1);
      expect(tags, at).toContain(op.tags?.[0]);
      expect(op.summary, at).toBeTruthy();
      expect(op.description, at).toMatch(/Authentication|No authentication/);
      expect(
        Object.keys(op.responses).some((s) => s.startsWith('4')),
        `${at} has a 4xx`,
      ).toBe(true);
    }
    expect(document.info.license?.name).toBe('MIT');
    expect(document.info.contact?.url).toMatch(/^https:\/\//);
  });

  it('has an example on every JSON request and response body', () => {
    let count = 0;
    for (const [at, op] of operations(document)) {
      const bodies = [op.requestBody, ...Object.values(op.responses)].map(
        (b) => ((b?.content ?? {}) as Record<string, Json>)['application/json'],
      );
      for (const media of bodies.filter(Boolean)) {
        expect(media, at).toHaveProperty('example');
        count++;
      }
    }
    expect(count).toBeGreaterThan(200);
    const sendBody = (pathItem(document, '/v1/send').post?.requestBody?.content ?? {}) as Record<string, Json>;
    expect(sendBody['application/json']?.example).toMatchObject({
      to: expect.anything(),
    });
  });
});

describe('OpenAPI 3.0.3 rendering', () => {
  it('is a valid OpenAPI 3.0 document', async () => {
    const result = await new Validator().validate(document30 as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document30.openapi).toBe('3.0.3');
  });

  it('has no 3.1-only schema constructs left', () => {
    const text = JSON.stringify(document30.paths) + JSON.stringify(document30.components);
    expect(text).not.toContain('"const":');
    expect(text).not.toContain('{"type":"null"}');
    expect(text).not.toContain('"not":{}');
    expect(text).not.toMatch(/"type":\[/);
    expect(text).not.toMatch(/"exclusiveM(in|ax)imum":\d/);
    expect(text).not.toMatch(/"\$ref":"[^"]+","[a-z]/); // a $ref with siblings
  });

  it('renders nullable, const and optional header schemas the 3.0 way', () => {
    const project = document30.components?.schemas?.Project as Json & { properties: Record<string, Json> };
    expect(project.properties.defaultFrom).toMatchObject({ type: 'string', nullable: true });
    const envelope = document30.components?.schemas?.ErrorEnvelope as Json & { properties: Record<string, Json> };
    expect(envelope.properties.success).toMatchObject({ type: 'boolean', enum: [false] });
    const send = pathItem(document30, '/v1/send').post as Operation & { parameters: Json[] };
    expect(send.parameters.find((p) => p.name === 'Idempotency-Key')).toMatchObject({
      in: 'header',
      required: false,
      schema: { type: 'string' },
    });
  });

  it('keeps every path, operation and example of the 3.1 document', () => {
    expect(operations(document30).map(([at]) => at)).toEqual(operations(document).map(([at]) => at));
    const examples = (op: Operation) => JSON.stringify(op.responses).match(/"example":/g)?.length;
    const ops31 = operations(document);
    for (const [i, [at, op30]] of operations(document30).entries()) {
      expect(examples(op30), at).toBe(examples((ops31[i] as (typeof ops31)[number])[1]));
    }
  });
});

describe('GET /auth/oauth-config in the document', () => {
  it('is documented with its response schema and a worked example', () => {
    const op = document.paths?.['/auth/oauth-config']?.get;
    expect(op?.description).toMatch(/authorizeUrl/);
    const ok = (op?.responses?.['200'] ?? {}) as { content?: Record<string, { schema: unknown; example: unknown }> };
    const media = ok.content?.['application/json'];
    expect(media?.schema).toEqual({ $ref: '#/components/schemas/OAuthConfig' });
    expect(media?.example).toEqual({
      providers: [
        { id: 'oidc', name: 'Keycloak', authorizeUrl: 'https://pigeon.example.com/auth/oauth/oidc/start' },
        { id: 'google', name: 'Google', authorizeUrl: 'https://pigeon.example.com/auth/oauth/google/start' },
      ],
    });
  });
});
