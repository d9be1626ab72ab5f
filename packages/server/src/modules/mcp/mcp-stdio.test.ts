import { existsSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject, uniqueEmail } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { CLI, runCli } from '../../../test/cli.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';

// `pigeon mcp` is the built CLI (`pnpm --filter @pigeon/server build`), spawned by the official client.
let pigeon: TestPigeon;
beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build the server first`);
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

const textOf = (result: unknown) => {
  const [first] = (result as CallToolResult).content;
  return first?.type === 'text' ? first.text : '';
};
const resourceJson = ({ contents: [first] }: ReadResourceResult) =>
  JSON.parse(first && 'text' in first ? first.text : '');

/** A loopback URL where nothing listens (a port just given back). */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe('pigeon mcp (stdio)', () => {
  it('serves the tools with the key from PIGEON_API_KEY against PIGEON_URL: sends and finds an email', async () => {
    const { project, auth } = await newProject(pigeon);
    bodyOf(await api(pigeon, auth).domains.create({ body: { domain: 'stdio.example' } }), 201);
    const client = new Client({ name: 'pigeon-test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp'],
      env: { PATH: process.env.PATH ?? '', PIGEON_API_KEY: project.secretKey, PIGEON_URL: pigeon.url },
      stderr: 'pipe',
    });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['emails_send', 'events_track']));
      const to = uniqueEmail('stdio');
      const sent = await client.callTool({
        name: 'emails_send',
        arguments: { to, from: 'hi@stdio.example', subject: 'Over stdio', body: 'Hello' },
      });
      expect(sent.isError).toBeFalsy();
      const emailId = JSON.parse(textOf(sent)).data.emails[0].email;
      const listed = JSON.parse(textOf(await client.callTool({ name: 'sentEmails_list', arguments: { to } })));
      expect(listed.data.map((e: { id: string }) => e.id)).toEqual([emailId]);
      const templates = await client.readResource({ uri: 'pigeon://templates' });
      expect(resourceJson(templates).data).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('answers a tool error naming the URL when no Pigeon answers there', async () => {
    const closed = await closedPortUrl();
    const client = new Client({ name: 'pigeon-test', version: '1.0.0' });
    const key = `sk_${'2'.repeat(64)}`;
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp'],
        env: { PATH: process.env.PATH ?? '', PIGEON_API_KEY: key, PIGEON_URL: closed },
        stderr: 'pipe',
      }),
    );
    try {
      const res = await client.callTool({ name: 'contacts_list', arguments: {} });
      expect(res.isError).toBe(true);
      expect(textOf(res)).toContain(`Pigeon's API at ${closed} did not answer`);
    } finally {
      await client.close();
    }
  });

  it('refuses to start without a secret key, saying which variable', async () => {
    const run = await runCli(['mcp'], { PIGEON_URL: pigeon.url, PIGEON_API_KEY: 'pk_nope' }, 30_000);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('PIGEON_API_KEY: Must be a project secret key');
  });
});
