import { z } from 'zod';

/** What `pigeon mcp` (the MCP server over stdio) needs: a running Pigeon to call, and a key. */
export interface McpClientConfig {
  /** The Pigeon whose API the tools call. */
  baseUrl: string;
  /** A project's secret key: every tool call is made with it. */
  apiKey: string;
}

const McpClientEnv = z.object({
  PIGEON_API_KEY: z
    .string({ required_error: 'Required: the secret key (sk_…) of the project the MCP tools act on' })
    .regex(/^sk_[0-9a-f]{64}$/, 'Must be a project secret key (sk_ and 64 hex characters)'),
  PIGEON_URL: z.string().url().optional(),
  PUBLIC_URL: z.string().url().optional(),
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
});

/**
 * `PIGEON_URL`, else this installation's `PUBLIC_URL`, else `http://localhost:PORT` (the server's
 * own default), so `pigeon mcp` run beside the server with the same environment needs only the key.
 */
export function loadMcpClientConfig(env: Record<string, string | undefined>): McpClientConfig {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = McpClientEnv.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  - ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration for pigeon mcp:\n${problems.join('\n')}`);
  }
  const e = parsed.data;
  const baseUrl = (e.PIGEON_URL ?? e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  return { baseUrl, apiKey: e.PIGEON_API_KEY };
}

export function loadMcpClientConfigFromEnvironment(): McpClientConfig {
  return loadMcpClientConfig(process.env);
}
