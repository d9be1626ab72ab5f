import type { AppRoute } from '@ts-rest/core';
import type { Operation } from './operations.js';

/** Where and as whom the MCP server calls Pigeon's HTTP API. */
export interface ApiTarget {
  baseUrl: string;
  key: string;
  /** Sent as X-Request-ID, so the API's log lines join the MCP request's. */
  requestId?: string;
}

export interface ApiAnswer {
  status: number;
  /** The parsed JSON body (the error envelope on failures), the text when not JSON, null when empty. */
  body: unknown;
}

export type Args = Record<string, unknown>;

/**
 * Performs one contract operation through the HTTP API with the caller's key, so validation,
 * authentication, scoping, limits and errors are the API's own.
 */
export async function callOperation(
  target: ApiTarget,
  op: Operation,
  args: Args,
  signal?: AbortSignal,
): Promise<ApiAnswer> {
  return callRoute(target, op.route, splitArgs(op, args), signal);
}

/** The API could not be reached (wrong PIGEON_URL, Pigeon stopped): said in one line, with the URL. */
export class ApiUnreachable extends Error {}

interface RequestParts {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  body: unknown;
}

export function splitArgs(op: Operation, args: Args): RequestParts {
  const parts: RequestParts = { params: {}, query: {}, headers: {}, body: undefined };
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    const part = op.partOf.get(key);
    if (part === 'params' || part === 'query') parts[part][key] = value;
    else if (part === 'headers') parts.headers[key] = String(value);
    else if (part === 'body' && op.bodyNested) parts.body = value;
    else if (part === 'body') body[key] = value;
  }
  if (!op.bodyNested && op.route.method !== 'GET' && 'body' in op.route) {
    // An optional body left empty is sent as none; a required one as {} (the API names what is missing).
    const optional = (op.route.body as { isOptional?: () => boolean } | undefined)?.isOptional?.() ?? true;
    parts.body = Object.keys(body).length > 0 || !optional ? body : undefined;
  }
  return parts;
}

export async function callRoute(
  target: ApiTarget,
  route: AppRoute,
  parts: Partial<RequestParts> = {},
  signal?: AbortSignal,
): Promise<ApiAnswer> {
  const url = new URL(target.baseUrl.replace(/\/+$/, '') + fillPath(route.path, parts.params ?? {}));
  for (const [key, value] of Object.entries(parts.query ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== undefined && item !== null) url.searchParams.append(key, queryValue(item));
    }
  }
  const headers: Record<string, string> = {
    ...parts.headers,
    authorization: `Bearer ${target.key}`,
    accept: 'application/json',
    ...(target.requestId ? { 'x-request-id': target.requestId } : {}),
  };
  const hasBody = parts.body !== undefined;
  if (hasBody) headers['content-type'] = 'application/json';
  const init = { method: route.method, headers, body: hasBody ? JSON.stringify(parts.body) : undefined, signal };
  const res = await fetch(url, init).catch((err: unknown) => {
    if (signal?.aborted) throw err;
    const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    throw new ApiUnreachable(`Pigeon's API at ${target.baseUrl} did not answer: ${cause}`);
  });
  return { status: res.status, body: await readBody(res) };
}

function fillPath(path: string, params: Record<string, unknown>): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(String(params[name] ?? '')));
}

const queryValue = (value: unknown) => (typeof value === 'object' ? JSON.stringify(value) : String(value));

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
