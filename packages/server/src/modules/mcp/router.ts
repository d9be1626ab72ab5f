import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type { AppDeps } from '../../deps.js';
import { DEFAULT_BODY_LIMIT } from '../../kit/body-limits.js';
import { bearerKey } from '../../kit/caller.js';
import { AppError, unauthorized } from '../../kit/errors.js';
import { findProjectByKey, keyTypeOf } from '../projects/public.js';

export const MCP_PATH = '/mcp';

/**
 * `POST /mcp`: the MCP server over Streamable HTTP, stateless (a server and a transport per request),
 * with a project's secret key as the bearer. Its tools call the API on the address the request came
 * in on, with the same key. The MCP SDK is loaded on the first request. Bodies are read up to 1 MB, as
 * most API routes (a larger message with attachments goes to /v1/send itself, behind its body gate).
 */
export function mcpRouter(deps: AppDeps): Router {
  const router = Router();
  router.post(MCP_PATH, requireSecretKey(deps), express.json({ limit: DEFAULT_BODY_LIMIT }), (req, res, next) => {
    serve(req, res).catch(next);
  });
  router.all(MCP_PATH, (req, _res, next) => {
    next(
      new AppError(
        'not-served',
        'BAD_REQUEST',
        `${req.method} ${MCP_PATH} is not served: this MCP server is stateless`,
        {
          suggestion: 'Send each MCP message as POST /mcp (Streamable HTTP without sessions or a GET stream).',
          headers: { allow: 'POST' },
        },
      ),
    );
  });
  return router;
}

/** 401 in the API's envelope before anything is read: a secret key of an existing project only. */
function requireSecretKey(deps: AppDeps) {
  return (req: Request, res: Response, next: NextFunction) => {
    const key = bearerKey(req.get('authorization'));
    if (!key) {
      next(
        new AppError('unauthenticated', 'UNAUTHORIZED', 'Missing API key', {
          suggestion: 'Send your project secret key as "Authorization: Bearer sk_…".',
        }),
      );
      return;
    }
    if (keyTypeOf(key) !== 'secret') {
      next(unauthorized('MCP takes a secret key (sk_…)', 'INVALID_API_KEY'));
      return;
    }
    // Counts nothing: each tool call is counted by the API request it makes.
    findProjectByKey(deps.db.pool, key, 'secret', 0)
      .then((found) => {
        if (!found) throw unauthorized('The API key is not valid', 'INVALID_API_KEY');
        res.locals.mcpKey = key;
        next();
      })
      .catch(next);
  };
}

async function serve(req: Request, res: Response): Promise<void> {
  const [{ createMcpServer }, { StreamableHTTPServerTransport }] = await Promise.all([
    import('./server.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
  ]);
  const server = createMcpServer({
    baseUrl: ownAddress(req),
    key: res.locals.mcpKey as string,
    requestId: req.requestId,
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
}

/** The listener this request reached (this process), as a base URL. */
function ownAddress(req: Request): string {
  const { address, port, family } = req.socket.address() as AddressInfo;
  return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
}
