import { http } from 'msw';
import type { SetupServer } from 'msw/node';

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
