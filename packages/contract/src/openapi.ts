import { type AppRoute, type AppRouter, isAppRoute, isAppRouteNoBody, isAppRouteOtherResponse } from '@ts-rest/core';
import {
  type OpenAPIObject,
  OpenApiBuilder,
  type OperationObject,
  type ParameterObject,
  type ResponsesObject,
  type SchemaObject,
} from 'openapi3-ts/oas31';
import { z } from 'zod';
import { ignoreOverride, zodToJsonSchema } from 'zod-to-json-schema';
import { type RouteAuth, type RouteMeta, SESSION_COOKIE } from './meta.js';

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
  serverUrl?: string;
}

const SECURITY: Record<RouteAuth, OperationObject['security']> = {
  none: [],
  session: [{ session: [] }],
  secret: [{ apiKey: [] }],
  track: [{ apiKey: [] }],
  dashboard: [{ apiKey: [] }, { session: [] }],
};

interface FlatRoute {
  id: string;
  tags: string[];
  route: AppRoute;
}

/** Walks the nested router; the operationId is the dotted path (e.g. `contacts.list`). */
export function flattenRoutes(router: AppRouter, prefix: string[] = []): FlatRoute[] {
  return Object.entries(router).flatMap(([key, value]) => {
    const path = [...prefix, key];
    if (isAppRoute(value)) {
      return [{ id: path.join('.'), tags: prefix.slice(0, 1), route: value }];
    }
    return flattenRoutes(value as AppRouter, path);
  });
}

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No content',
  '400': 'Bad request',
  '401': 'Missing or invalid API key',
  '403': 'Forbidden',
  '404': 'Not found',
  '409': 'Conflict',
  '413': 'Payload too large',
  '422': 'Validation failed',
  '429': 'Rate limit exceeded',
  '500': 'Unexpected error',
  '503': 'Service unavailable',
};

/**
 * Builds the OpenAPI 3.1 document from the contract. Named schemas become
 * `components.schemas` entries and are referenced wherever the same zod object is reused.
 */
export function buildOpenApiDocument(
  router: AppRouter,
  named: Record<string, z.ZodTypeAny>,
  info: OpenApiInfo,
): OpenAPIObject {
  const converter = new SchemaConverter(named);
  const builder = OpenApiBuilder.create({
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    paths: {},
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Project API key: `sk_…` (secret) for every endpoint, `pk_…` (public) for `POST /v1/track` only.',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description:
            'Dashboard session from POST /auth/login. On project resources, also send `X-Project-Id` naming a project you belong to.',
        },
      },
    },
  });
  if (info.serverUrl) builder.addServer({ url: info.serverUrl });

  const byPath = new Map<string, Record<string, OperationObject>>();
  for (const { id, tags, route } of flattenRoutes(router)) {
    const path = toOpenApiPath(route.path);
    const ops = byPath.get(path) ?? {};
    ops[route.method.toLowerCase()] = buildOperation(id, tags, route, converter);
    byPath.set(path, ops);
  }
  for (const [path, ops] of byPath) builder.addPath(path, ops);
  for (const [name, schema] of Object.entries(converter.components())) builder.addSchema(name, schema);
  return builder.getSpec();
}

function buildOperation(id: string, tags: string[], route: AppRoute, converter: SchemaConverter): OperationObject {
  const op: OperationObject = {
    operationId: id,
    summary: route.summary,
    description: route.description,
    tags,
    parameters: [
      ...objectParameters(route.pathParams, 'path', converter),
      ...objectParameters(route.query, 'query', converter),
      ...objectParameters(route.headers, 'header', converter),
    ],
    responses: buildResponses(route, converter),
  };
  op.security = SECURITY[((route.metadata ?? {}) as Partial<RouteMeta>).auth ?? 'secret'];
  if ('body' in route && !isAppRouteNoBody(route.body) && route.body !== undefined) {
    const contentType = route.contentType ?? 'application/json';
    op.requestBody = {
      required: true,
      content: { [contentType]: { schema: converter.convert(route.body as z.ZodTypeAny) } },
    };
  }
  return op;
}

function objectParameters(
  schema: unknown,
  location: 'path' | 'query' | 'header',
  converter: SchemaConverter,
): ParameterObject[] {
  const shape = objectShape(schema);
  if (!shape) return [];
  return Object.entries(shape).map(([name, field]) => ({
    name,
    in: location,
    required: location === 'path' ? true : !field.isOptional(),
    description: field.description,
    schema: converter.convert(field),
  }));
}

function objectShape(schema: unknown): Record<string, z.ZodTypeAny> | undefined {
  let current = schema;
  while (current instanceof z.ZodEffects) current = current.innerType();
  return current instanceof z.ZodObject ? (current.shape as Record<string, z.ZodTypeAny>) : undefined;
}

function buildResponses(route: AppRoute, converter: SchemaConverter): ResponsesObject {
  const responses: ResponsesObject = {};
  for (const [status, response] of Object.entries(route.responses)) {
    const description = STATUS_TEXT[status] ?? `Status ${status}`;
    if (isAppRouteNoBody(response)) {
      responses[status] = { description };
    } else if (isAppRouteOtherResponse(response)) {
      responses[status] = {
        description,
        content: { [response.contentType]: { schema: converter.convert(response.body as z.ZodTypeAny) } },
      };
    } else {
      responses[status] = {
        description,
        content: { 'application/json': { schema: converter.convert(response as z.ZodTypeAny) } },
      };
    }
  }
  return responses;
}

/** Converts zod schemas to JSON Schema 2020-12 flavoured objects with `$ref`s to named components. */
class SchemaConverter {
  private readonly byInstance = new Map<z.ZodTypeAny, string>();
  private readonly byDef = new Map<unknown, string>();
  private readonly used = new Set<string>();

  constructor(private readonly named: Record<string, z.ZodTypeAny>) {
    for (const [name, schema] of Object.entries(named)) {
      this.byInstance.set(schema, name);
      this.byDef.set(schema._def, name);
    }
  }

  convert(schema: z.ZodTypeAny): SchemaObject {
    const name = this.byInstance.get(schema);
    if (name) {
      this.used.add(name);
      return { $ref: `#/components/schemas/${name}` };
    }
    return this.toJsonSchema(schema, undefined);
  }

  components(): Record<string, SchemaObject> {
    // Components may reference further components: convert until no new names appear.
    const out: Record<string, SchemaObject> = {};
    let pending = [...this.used];
    while (pending.length > 0) {
      for (const name of pending) out[name] = this.toJsonSchema(this.named[name] as z.ZodTypeAny, name);
      pending = [...this.used].filter((n) => !(n in out));
    }
    return out;
  }

  private toJsonSchema(schema: z.ZodTypeAny, self: string | undefined): SchemaObject {
    const result = zodToJsonSchema(schema, {
      target: 'jsonSchema2019-09',
      $refStrategy: 'none',
      removeAdditionalStrategy: 'strict',
      // A pipe's first stage only guards (e.g. the condition tree's size check): document what it yields.
      pipeStrategy: 'output',
      override: (def, refs) => {
        const name = this.byDef.get(def);
        const isRoot = refs.currentPath.length <= 1;
        if (!name || (isRoot && name === self)) return ignoreOverride;
        this.used.add(name);
        return { $ref: `#/components/schemas/${name}` };
      },
    }) as Record<string, unknown>;
    const { $schema: _ignored, ...rest } = result;
    return rest as SchemaObject;
  }
}
