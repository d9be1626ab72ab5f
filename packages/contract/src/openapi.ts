import { type AppRoute, type AppRouter, isAppRoute, isAppRouteNoBody, isAppRouteOtherResponse } from '@ts-rest/core';
import { sample } from 'openapi-sampler';
import {
  type MediaTypeObject,
  type OpenAPIObject,
  OpenApiBuilder,
  type OperationObject,
  type ParameterObject,
  type RequestBodyObject,
  type ResponseObject,
  type ResponsesObject,
  type SchemaObject,
} from 'openapi3-ts/oas31';
import { z } from 'zod';
import { ignoreOverride, zodToJsonSchema } from 'zod-to-json-schema';
import type { ErrorCode } from './common.js';
import { type RouteAuth, type RouteMeta, SESSION_COOKIE } from './meta.js';
import { ACCOUNT, PERMISSIONS, type Permission, Role, SECRET_KEY_ROLE } from './permissions.js';
import { WEBHOOK_EVENT_EXAMPLES } from './routes/webhook-events.js';

export { toOpenApi30 } from './openapi30.js';

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
  serverUrl?: string;
}

/** One tag per part of the contract, described in `tags` (generators name their API classes after them). */
const TAGS: Record<string, string> = {
  system: 'Health and the deployment configuration (no authentication)',
  auth: 'Accounts: sign-up, login (the dashboard session cookie), email verification, password reset',
  users: 'The signed-in user and their projects: settings (tracking, redirects, default sender), keys, webhook secret',
  projects: 'Onboarding and security state of a project, and its members and invitations',
  contacts: 'Contacts with custom data: cursor pages, upsert, fields, CSV import and bulk jobs',
  events: 'Tracked events: POST /v1/track (public or secret key), lists, stats, names and usage',
  dmarcReports:
    'DMARC aggregate reports receivers mail to the inbound receiver: pass and fail by source IP and by day, per sender domain',
  domains: 'Sender domains: DKIM keys and the DNS records to publish, verification',
  trackingDomains:
    'Tracking domains: the host of open and click links in mail from a sender domain (a CNAME to Pigeon)',
  topics: "Topics a contact subscribes to or leaves (the preference page), and each contact's choices",
  senderCheck: 'The sender check of a domain: SPF, DKIM, DMARC, return path, one-click unsubscribe, rates, relay TLS',
  templates: 'Email templates (HTML with {{placeholders}}), offset pages, usage',
  emails: 'POST /v1/send: transactional email now, to one or more recipients',
  activity: 'The activity feed of email and contact events, its stats, and upcoming sends',
  segments: 'DYNAMIC segments (condition trees) and STATIC ones (members by email), live member pages',
  campaigns: 'One email to all contacts, a segment or a condition; sent now or scheduled; stats',
  workflows: 'Event-triggered workflows: steps, transitions, executions per contact',
  verify: 'POST /v1/verify: address checks from offline lists and DNS',
  suppressions: 'Addresses no longer sent to after a hard bounce or a complaint; lift them here',
  billing: 'Monthly caps per category and consumption; Stripe checkout, portal and invoices when billing is on',
  inboundWebhooks: 'Inbound webhooks from infrastructure (Stripe, Amazon SNS); not called by applications',
  analytics: 'Email metrics per hour or day, top campaigns and top events, from hourly counts',
  uploads: 'Images for template bodies, served from the public URL',
  sentEmails: 'GET /emails/:id and GET /emails: what became of each email, with its timeline; cancel a scheduled one',
  webhookEndpoints:
    'Outbound event webhooks: endpoints, their deliveries and attempts, replay, test events, secret rotation (Standard Webhooks)',
  inboundRoutes:
    'Inbound mail routes: which addresses of a verified domain take mail (email.received), and the messages they took',
};

/** How each kind of route authenticates, for operation descriptions. */
const AUTH_TEXT: Record<RouteAuth, string> = {
  none: 'No authentication.',
  session: 'Authentication: the dashboard session cookie from `POST /auth/login`.',
  secret: 'Authentication: a secret key (`Authorization: Bearer sk_…`).',
  track: 'Authentication: a public key (`pk_…`, safe in browsers) or a secret key.',
  dashboard: 'Authentication: a secret key, or the session cookie with `X-Project-Id` naming one of your projects.',
  project: 'Authentication: the secret key of project `:id`, or the session cookie of one of its members.',
};

/** `info.license` and `info.contact` of both documents. */
export const API_LICENSE = { name: 'MIT', url: 'https://opensource.org/license/mit' };
export const API_CONTACT = { name: 'Pigeon', url: 'https://github.com/pigeon-email/pigeon' };

const SECURITY: Record<RouteAuth, OperationObject['security']> = {
  none: [],
  session: [{ session: [] }],
  secret: [{ apiKey: [] }],
  track: [{ apiKey: [] }],
  dashboard: [{ apiKey: [] }, { session: [] }],
  project: [{ apiKey: [] }, { session: [] }],
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
    info: {
      title: info.title,
      version: info.version,
      description: info.description,
      license: API_LICENSE,
      contact: API_CONTACT,
    },
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
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
  return addExamples(builder.getSpec());
}

/**
 * A request and response example on every JSON body, sampled from its schema (openapi-sampler:
 * `default`s, enums, formats and patterns), so generators and Swagger UI show realistic payloads.
 */
function addExamples(document: OpenAPIObject): OpenAPIObject {
  const json = (content: unknown) => (content as Record<string, MediaTypeObject> | undefined)?.['application/json'];
  for (const ops of Object.values(document.paths ?? {})) {
    for (const op of Object.values(ops as Record<string, OperationObject>)) {
      const media = [
        json((op.requestBody as RequestBodyObject | undefined)?.content),
        ...Object.values(op.responses ?? {}).map((r) => json((r as ResponseObject).content)),
      ];
      for (const m of media) {
        if (m?.schema && m.example === undefined)
          m.example = sample(m.schema as Parameters<typeof sample>[0], { skipReadOnly: true }, document);
      }
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const m = json((response as ResponseObject).content);
        if (m && (m.schema as { $ref?: string } | undefined)?.$ref === ERROR_ENVELOPE_REF) {
          m.example = errorExample(Number(status));
        }
      }
    }
  }
  return document;
}

const ERROR_ENVELOPE_REF = '#/components/schemas/ErrorEnvelope';

/** The code each status answers with most often (a status may also carry others; `ErrorCode` lists all). */
const STATUS_ERRORS: Record<number, [ErrorCode, string]> = {
  400: ['BAD_REQUEST', 'The request is not valid here'],
  401: ['INVALID_API_KEY', 'Invalid API key'],
  403: ['FORBIDDEN', 'This key or member cannot do that'],
  404: ['NOT_FOUND', 'Resource not found'],
  409: ['CONFLICT', 'The resource is in a state that does not allow this'],
  413: ['PAYLOAD_TOO_LARGE', 'The request body is too large'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'Send application/json'],
  422: ['VALIDATION_ERROR', 'subject: Required unless a template gives it'],
  429: ['RATE_LIMIT_EXCEEDED', 'Too many requests: retry after the Retry-After header'],
  500: ['INTERNAL_SERVER_ERROR', 'Internal server error'],
  503: ['QUERY_TIMEOUT', 'The query took too long and was stopped'],
};

/** An error envelope as the server answers it with `status`. */
function errorExample(status: number) {
  const [code, message] = STATUS_ERRORS[status] ?? ['INTERNAL_SERVER_ERROR', 'Unexpected error'];
  const errors =
    status === 422
      ? [{ field: 'subject', message: 'Required unless a template gives it', code: 'invalid_type' }]
      : undefined;
  return {
    success: false,
    error: {
      code,
      message,
      statusCode: status,
      requestId: '0190c2a4-7b7e-7cc0-9a3f-1c2d3e4f5a6b',
      ...(errors ? { errors } : {}),
    },
    message,
    timestamp: '2026-01-01T00:00:00.000Z',
  };
}

function buildOperation(id: string, tags: string[], route: AppRoute, converter: SchemaConverter): OperationObject {
  const op: OperationObject = {
    operationId: id,
    summary: route.summary,
    description: [route.description ?? `${route.summary}.`, AUTH_TEXT[authOf(route)], permissionText(route)]
      .filter(Boolean)
      .join('\n\n'),
    tags,
    parameters: [
      ...objectParameters(route.pathParams, 'path', converter),
      ...objectParameters(route.query, 'query', converter),
      ...objectParameters(route.headers, 'header', converter),
    ],
    responses: buildResponses(route, converter),
  };
  op.security = SECURITY[authOf(route)];
  const permission = permissionOf(route);
  if (permission) op['x-pigeon-permission'] = { name: permission, roles: [...PERMISSIONS[permission]] };
  if ('body' in route && !isAppRouteNoBody(route.body) && route.body !== undefined) {
    const contentType = route.contentType ?? 'application/json';
    op.requestBody = {
      required: true,
      content: { [contentType]: { schema: converter.convert(route.body as z.ZodTypeAny) } },
    };
    const example = (route.metadata as Partial<RouteMeta> | undefined)?.example;
    if (example !== undefined) (op.requestBody.content[contentType] as MediaTypeObject).example = example;
  }
  return op;
}

const authOf = (route: AppRoute): RouteAuth => ((route.metadata ?? {}) as Partial<RouteMeta>).auth ?? 'secret';

/** The project permission a route names (`RouteMeta.permission`), if any; `account` names none. */
function permissionOf(route: AppRoute): Permission | undefined {
  const permission = ((route.metadata ?? {}) as Partial<RouteMeta>).permission;
  return permission === undefined || permission === ACCOUNT ? undefined : permission;
}

function permissionText(route: AppRoute): string | undefined {
  const permission = permissionOf(route);
  if (!permission) return undefined;
  const roles: readonly Role[] = PERMISSIONS[permission];
  const key = authOf(route) === 'session' ? '' : ` (a secret key counts as the ${SECRET_KEY_ROLE})`;
  const others = roles.length < Role.options.length ? '; other members get 403 `INSUFFICIENT_ROLE`' : '';
  return `Permission: \`${permission}\`, the ${roles.join(' or ')} role${key}${others}.`;
}

function objectParameters(
  schema: unknown,
  location: 'path' | 'query' | 'header',
  converter: SchemaConverter,
): ParameterObject[] {
  const shape = objectShape(schema);
  if (!shape) return [];
  return Object.entries(shape).map(([name, field]) => ({
    name: location === 'header' ? canonicalHeaderName(name) : name,
    in: location,
    required: location === 'path' ? true : !field.isOptional(),
    description: field.description,
    schema: converter.convert(field),
  }));
}

/**
 * `idempotency-key` → `Idempotency-Key`: HTTP header names are case-insensitive, but some generated
 * clients (Perl's OpenAPI::Client) match a parameter by its exact name and drop the one a user
 * spells as the documentation does.
 */
const canonicalHeaderName = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => dash + letter.toUpperCase());

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
      for (const name of pending) {
        const schema = this.toJsonSchema(this.named[name] as z.ZodTypeAny, name);
        out[name] = name in COMPONENT_EXAMPLES ? { ...schema, examples: [COMPONENT_EXAMPLES[name]] } : schema;
      }
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
    return portable(withPatternExamples(numericBounds(rest))) as SchemaObject;
  }
}

/** Examples of recursive schemas, which a sampler cuts off (a nested tree without its `groups`). */
const COMPONENT_EXAMPLES: Record<string, unknown> = {
  OAuthConfig: {
    providers: [
      { id: 'oidc', name: 'Keycloak', authorizeUrl: 'https://pigeon.example.com/auth/oauth/oidc/start' },
      { id: 'google', name: 'Google', authorizeUrl: 'https://pigeon.example.com/auth/oauth/google/start' },
    ],
  },
  ...WEBHOOK_EVENT_EXAMPLES,
  ConditionTree: {
    logic: 'AND',
    groups: [
      {
        filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }],
        conditions: {
          logic: 'OR',
          groups: [{ filters: [{ field: 'event.signed-up', operator: 'triggeredWithin', value: 7, unit: 'days' }] }],
        },
      },
    ],
  },
};

/** Examples for string patterns that a sampler cannot fill on its own (keyed by the pattern). */
const PATTERN_EXAMPLES: Record<string, string> = {
  '^whsec_': 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  '^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]{2,63}$': 'example.com',
};

function withPatternExamples(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withPatternExamples);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = withPatternExamples(value);
  const example = typeof out.pattern === 'string' ? PATTERN_EXAMPLES[out.pattern] : undefined;
  if (example !== undefined && out.examples === undefined) out.examples = [example];
  return out;
}

/**
 * What every reader of the documents can take: patterns without JavaScript-only `\uXXXX` escapes
 * (`\xHH` below U+0100, the character itself above; Perl, PCRE, Go and Java read both), and no
 * `{ not: {} }` ("never") alternatives, which zod-to-json-schema writes for optional fields.
 */
function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = portable(value);
  if (typeof out.pattern === 'string') out.pattern = portablePattern(out.pattern);
  if (Array.isArray(out.anyOf)) {
    const { anyOf, ...rest } = out;
    const kept = (anyOf as unknown[]).filter((s) => !isNever(s));
    if (kept.length === 1) return { ...(kept[0] as object), ...rest };
    out.anyOf = kept;
  }
  return out;
}

const isNever = (schema: unknown) =>
  !!schema &&
  typeof schema === 'object' &&
  Object.keys(schema).length === 1 &&
  JSON.stringify((schema as { not?: unknown }).not) === '{}';

export const portablePattern = (pattern: string) =>
  pattern.replace(/\\u([0-9A-Fa-f]{4})/g, (_m, hex: string) => {
    const code = Number.parseInt(hex, 16);
    return code < 0x100 ? `\\x${hex.slice(2).toUpperCase()}` : String.fromCharCode(code);
  });

/**
 * zod-to-json-schema writes draft-4 booleans (`exclusiveMinimum: true` beside `minimum`) even for
 * 2019-09; JSON Schema 2019-09 and OpenAPI 3.1 want the bound itself in `exclusiveMinimum`.
 */
function numericBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(numericBounds);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = numericBounds(value);
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (out[flag] === true) {
      out[flag] = out[bound];
      delete out[bound];
    } else if (out[flag] === false) delete out[flag];
  }
  return out;
}
