import { type Contract, contract, type RouteAuth, type RouteMeta } from '@pigeon/contract';
import { type AppRoute, type AppRouter, isAppRoute } from '@ts-rest/core';
import { z } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';

/** Route kinds a secret key satisfies; `session` (the console's cookie only) and `none` are not tools. */
const KEY_AUTH = new Set<RouteAuth>(['secret', 'dashboard', 'track', 'project']);

type Part = 'params' | 'query' | 'headers' | 'body';

/** One contract operation an API key may call, as an MCP tool. */
export interface Operation {
  /** The router key path joined by `_` (`emails_send`, `contacts_list`). */
  name: string;
  title: string;
  description: string;
  route: AppRoute;
  /** The route's path parameters, query, headers and body fields merged into one object. */
  input: z.ZodObject<z.ZodRawShape>;
  inputSchema: { type: 'object'; [key: string]: unknown };
  /** Which part of the request each argument goes to. */
  partOf: Map<string, Part>;
  /** The body is not an object, or shares a name with another part: it is the `body` argument. */
  bodyNested: boolean;
}

/** Every operation an API key may call, in the contract's order; built once per process. */
export function keyOperations(router: Contract = contract): Operation[] {
  return walk(router as unknown as AppRouter, []).filter(
    ({ route }) => KEY_AUTH.has(authOf(route)) && !isMultipart(route),
  );
}

function walk(router: AppRouter, prefix: string[]): Operation[] {
  return Object.entries(router).flatMap(([key, value]) => {
    const path = [...prefix, key];
    return isAppRoute(value) ? [toOperation(path.join('_'), value)] : walk(value as AppRouter, path);
  });
}

const authOf = (route: AppRoute): RouteAuth => ((route.metadata ?? {}) as Partial<RouteMeta>).auth ?? 'secret';

// Uploads and the CSV import take a file (multipart/form-data), which a tool's JSON arguments do not carry.
const isMultipart = (route: AppRoute) => (route as { contentType?: string }).contentType === 'multipart/form-data';

function toOperation(name: string, route: AppRoute): Operation {
  const partOf = new Map<string, Part>();
  const shape: z.ZodRawShape = {};
  const add = (part: Part, fields: z.ZodRawShape | undefined) => {
    for (const [key, schema] of Object.entries(fields ?? {})) {
      partOf.set(key, part);
      shape[key] = schema;
    }
  };
  add('params', shapeOf(route.pathParams));
  add('query', shapeOf(route.query));
  add('headers', shapeOf((route as { headers?: unknown }).headers));
  const body = 'body' in route ? (route.body as z.ZodTypeAny | undefined) : undefined;
  const bodyShape = body instanceof z.ZodType ? shapeOf(body) : undefined;
  const bodyNested = body instanceof z.ZodType && (!bodyShape || Object.keys(bodyShape).some((key) => partOf.has(key)));
  if (bodyNested) add('body', { body });
  else if (bodyShape) add('body', body?.isOptional() ? z.object(bodyShape).partial().shape : bodyShape);
  const input = z.object(shape).strict();
  return {
    name,
    title: route.summary ?? name,
    description: describe(route),
    route,
    input,
    inputSchema: toJsonSchema(input),
    partOf,
    bodyNested,
  };
}

/** The fields of an object schema, under optional/default/refinement wrappers; undefined for anything else. */
function shapeOf(schema: unknown): z.ZodRawShape | undefined {
  if (schema instanceof z.ZodObject) return schema.shape;
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return shapeOf(schema.unwrap());
  if (schema instanceof z.ZodDefault) return shapeOf(schema.removeDefault());
  if (schema instanceof z.ZodEffects) return shapeOf(schema.innerType());
  return undefined;
}

function describe(route: AppRoute): string {
  const summary = route.summary ? `${route.summary.replace(/\.$/, '')}.` : '';
  return [summary, route.description, `(${route.method} ${route.path})`].filter(Boolean).join('\n\n');
}

function toJsonSchema(input: z.ZodTypeAny): Operation['inputSchema'] {
  const { $schema: _ignored, ...schema } = zodToJsonSchema(input, {
    target: 'jsonSchema7',
    // Recursive schemas (condition trees) refer back into the same document.
    $refStrategy: 'root',
    // A pipe's first stage only guards (the condition tree's size check): describe what it takes.
    pipeStrategy: 'output',
    effectStrategy: 'input',
  }) as Record<string, unknown>;
  return { ...schema, type: 'object' };
}
