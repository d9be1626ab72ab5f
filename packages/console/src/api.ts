import { type Pigeon, PigeonAccount, PigeonError } from '@pigeon/sdk';

/**
 * The console's only way to the server: the SDK, acting with the signed-in person's session cookie
 * (same origin: the console is served by Pigeon at /app/). No hand-written fetch of JSON anywhere.
 */
export const account = new PigeonAccount({ baseUrl: window.location.origin, maxRetries: 1, timeoutMs: 30_000 });

const clients = new Map<string, Pigeon>();

/** The project API as the signed-in member of `projectId` (one client per project). */
export function projectApi(projectId: string): Pigeon {
  let client = clients.get(projectId);
  if (!client) {
    client = account.project(projectId);
    clients.set(projectId, client);
  }
  return client;
}

/** The API's own message, or a plain one for a network failure. */
export function messageOf(error: unknown): string {
  if (error instanceof PigeonError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/** Field-level errors of a 422, by field name. */
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof PigeonError)) return {};
  const out: Record<string, string> = {};
  for (const e of error.errors ?? []) out[e.field] ??= e.message;
  return out;
}

export const isStatus = (error: unknown, status: number) => error instanceof PigeonError && error.status === status;
