import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { McpClientConfig } from '../../config/mcp-client.js';
import { createMcpServer } from './server.js';

/**
 * `pigeon mcp`: the MCP server over stdin/stdout for a local client (Claude Desktop, Claude Code…).
 * It holds no database: every tool call goes to the configured Pigeon's HTTP API with the key.
 * Resolves when the client closes stdin.
 */
export async function runStdioMcpServer(config: McpClientConfig): Promise<void> {
  const server = createMcpServer({ baseUrl: config.baseUrl, key: config.apiKey });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
