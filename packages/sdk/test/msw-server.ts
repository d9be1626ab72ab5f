import { http } from 'msw';
import { type SetupServer, setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { Pigeon } from '../src/index.js';

/** The base URL msw answers for in the SDK's unit tests (no real server: DESIGN.md allows msw here). */
export const BASE = 'http://pigeon.test';
/** A client's options against msw: retries without real waiting. */
export const clientOptions = { baseUrl: BASE, retryBaseDelayMs: 1, retryMaxDelayMs: 5 };
export const requestId = '0190c2a4-7b7e-7cc0-9a3f-1c2d3e4f5a6b';
/** A UUIDv7-shaped id numbered `n`. */
export const uuid = (n: number) => `0190c2a4-7b7e-7cc0-9a3f-${String(n).padStart(12, '0')}`;

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Respond = (request: Request, n: number) => Response | Promise<Response>;

/**
 * `route(method, path, respond)` for one msw server and base URL: records every request to
 * `method path` and answers with `respond(request, n)` (n counts from 0).
 */
export function routeRecorder(server: SetupServer, base: string) {
  return (method: Method, path: string, respond: Respond) => {
    const requests: Request[] = [];
    server.use(
      http[method](`${base}${path}`, ({ request }) => {
        requests.push(request.clone());
        return respond(request, requests.length - 1);
      }),
    );
    return requests;
  };
}

/**
 * One test file's msw server: listening before its tests (an unhandled request fails the test),
 * reset after each, closed at the end. `pigeon()` is a secret-key client of it.
 */
export function mockPigeonApi() {
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());
  return {
    server,
    route: routeRecorder(server, BASE),
    pigeon: () => new Pigeon({ apiKey: 'sk_test', ...clientOptions }),
  };
}
