import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ErrorCode, McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject, uniqueEmail } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { until } from '../../../test/until.js';

let pigeon: TestPigeon;
const clients: Client[] = [];
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await pigeon?.stop();
});

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'pigeon-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${pigeon.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

// The local outbox verifies a domain on creation; a domain belongs to one project at a time.
let domains = 0;
async function projectWithSender() {
  const setup = await newProject(pigeon);
  const domain = `mcp${++domains}.example`;
  bodyOf(await api(pigeon, setup.auth).domains.create({ body: { domain } }), 201);
  return { ...setup, from: `hello@${domain}`, mcp: await connect(setup.project.secretKey) };
}

const textOf = (result: unknown) => {
  const [first] = (result as CallToolResult).content;
  if (first?.type !== 'text') throw new Error(`no text content: ${JSON.stringify(result)}`);
  return first.text;
};
const jsonOf = (result: unknown) => JSON.parse(textOf(result));
const resourceJson = ({ contents: [first] }: ReadResourceResult) =>
  JSON.parse(first && 'text' in first ? first.text : '');

describe('MCP over Streamable HTTP (POST /mcp)', () => {
  it('lists one tool per operation a key may call, named, described and with an object input schema', async () => {
    const { mcp } = await projectWithSender();
    expect(mcp.getServerVersion()?.name).toBe('pigeon');
    const { tools } = await mcp.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['emails_send', 'events_track', 'contacts_list', 'sentEmails_list', 'templates_get']) {
      expect(names).toContain(name);
    }
    // Session-only, unauthenticated and multipart routes are not tools.
    for (const name of ['auth_login', 'users_me', 'users_createProject', 'system_health', 'uploads_image']) {
      expect(names).not.toContain(name);
    }
    expect(new Set(names).size).toBe(names.length);
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(10);
      expect(tool.inputSchema.type, tool.name).toBe('object');
    }
    const send = tools.find((t) => t.name === 'emails_send');
    expect(send?.description).toContain('POST /v1/send');
    expect(send?.inputSchema.properties).toHaveProperty('to');
    expect(send?.inputSchema.properties).toHaveProperty('subject');
    const get = tools.find((t) => t.name === 'templates_get');
    expect(get?.inputSchema.required).toEqual(['id']);
    expect(get?.annotations?.readOnlyHint).toBe(true);
  });

  it('sends an email, tracks an event and finds both through the API, all as the key', async () => {
    const { mcp, from, auth } = await projectWithSender();
    const to = uniqueEmail('mcp');
    const sent = await mcp.callTool({
      name: 'emails_send',
      arguments: { to, from, subject: 'Hello from MCP', body: '<p>Hi</p>' },
    });
    expect(sent.isError).toBeFalsy();
    const emailId = jsonOf(sent).data.emails[0].email as string;

    const listed = await mcp.callTool({ name: 'sentEmails_list', arguments: { to, limit: 5 } });
    expect(listed.isError).toBeFalsy();
    expect(jsonOf(listed).data.map((e: { id: string }) => e.id)).toEqual([emailId]);
    const one = jsonOf(await mcp.callTool({ name: 'sentEmails_get', arguments: { id: emailId } }));
    expect(one).toMatchObject({ id: emailId, subject: 'Hello from MCP' });

    const tracked = await mcp.callTool({
      name: 'events_track',
      arguments: { email: to, event: 'mcp-tried', data: { plan: 'pro' } },
    });
    expect(tracked.isError).toBeFalsy();
    expect(jsonOf(tracked)).toMatchObject({ success: true });
    const events = await until(
      async () => bodyOf(await api(pigeon, auth).events.list({ query: { name: 'mcp-tried' } }), 200).data,
      (found) => found.length > 0,
    );
    expect(events[0]).toMatchObject({ name: 'mcp-tried' });
  });

  it('reads templates and recent emails as resources', async () => {
    const { mcp, from, auth } = await projectWithSender();
    const template = bodyOf(
      await api(pigeon, auth).templates.create({ body: { name: 'Welcome', subject: 'Hi', body: '<p>x</p>', from } }),
      201,
    );
    const { resources } = await mcp.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['pigeon://emails/recent', 'pigeon://templates']);
    const { resourceTemplates } = await mcp.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual(['pigeon://templates/{id}']);

    const list = await mcp.readResource({ uri: 'pigeon://templates' });
    expect(resourceJson(list).data.map((t: { id: string }) => t.id)).toEqual([template.id]);
    const one = await mcp.readResource({ uri: `pigeon://templates/${template.id}` });
    expect(resourceJson(one)).toMatchObject({ id: template.id, name: 'Welcome' });

    await mcp.callTool({ name: 'emails_send', arguments: { to: uniqueEmail(), from, subject: 'S', body: 'B' } });
    const recent = await mcp.readResource({ uri: 'pigeon://emails/recent' });
    expect(resourceJson(recent).data).toHaveLength(1);

    const missing = await mcp
      .readResource({ uri: 'pigeon://templates/00000000-0000-4000-8000-000000000000' })
      .catch((e) => e);
    expect(missing).toBeInstanceOf(McpError);
    expect((missing as McpError).message).toContain('NOT_FOUND');
  });

  it('answers API errors as tool errors carrying the envelope', async () => {
    const { mcp } = await projectWithSender();
    const res = await mcp.callTool({
      name: 'emails_send',
      arguments: { to: uniqueEmail(), from: 'someone@unverified.example', subject: 'S', body: 'B' },
    });
    expect(res.isError).toBe(true);
    const envelope = jsonOf(res);
    expect(envelope.success).toBe(false);
    expect(envelope.error.statusCode).toBe(403);
  });

  it('refuses malformed calls with a clear MCP error and does nothing', async () => {
    const { mcp, auth, from } = await projectWithSender();
    const unknown = await mcp.callTool({ name: 'emails_sendd', arguments: {} }).catch((e) => e);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((unknown as McpError).message).toContain('Unknown tool "emails_sendd"');

    const bad = await mcp.callTool({ name: 'emails_send', arguments: { to: 42, from, subject: 'S', body: 'B' } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^Invalid arguments for emails_send: to: /);
    const extra = await mcp.callTool({
      name: 'emails_send',
      arguments: { to: uniqueEmail(), from, subject: 'S', body: 'B', priority: 'high' },
    });
    expect(textOf(extra)).toContain("Unrecognized key(s) in object: 'priority'");
    const dots = await mcp.callTool({ name: 'contacts_deleteField', arguments: { field: '..' } });
    expect(textOf(dots)).toBe('Invalid arguments for contacts_deleteField: field: "." and ".." are not accepted');
    const noId = await mcp.callTool({ name: 'templates_get', arguments: {} });
    expect(textOf(noId)).toContain('id: Required');

    const track = await mcp.callTool({ name: 'events_track', arguments: { email: 'nobody', event: 'x', extra: 1 } });
    expect(textOf(track)).toMatch(
      /^Invalid arguments for events_track: .*email: .*Unrecognized key\(s\) in object: 'extra'/,
    );

    const emails = bodyOf(await api(pigeon, auth).sentEmails.list({ query: {} }), 200);
    expect(emails.data).toEqual([]);
    expect(bodyOf(await api(pigeon, auth).contacts.list({ query: {} }), 200).data).toEqual([]);

    // Not JSON-RPC at all: the transport's own refusal.
    // untyped: outside the contract (the MCP endpoint)
    const garbage = await pigeon.request('POST', '/mcp', {
      headers: { ...auth, accept: 'application/json, text/event-stream' },
      body: { hello: 'world' },
    });
    expect(garbage.status).toBe(400);
    expect(garbage.body.error).toMatchObject({
      code: ErrorCode.ParseError,
      message: expect.stringContaining('JSON-RPC'),
    });
    // untyped: outside the contract (the MCP endpoint)
    const notJson = await pigeon.request('POST', '/mcp', {
      headers: { ...auth, 'content-type': 'application/json' },
      rawBody: '{"jsonrpc":',
    });
    expectEnvelope(notJson, 400, 'MALFORMED_JSON');
  });

  it('refuses a missing, public or unknown key before reading anything, in the API envelope', async () => {
    const { project } = await projectWithSender();
    const init = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const accept = 'application/json, text/event-stream';
    // untyped: outside the contract (the MCP endpoint)
    expectEnvelope(await pigeon.request('POST', '/mcp', { headers: { accept }, body: init }), 401, 'UNAUTHORIZED');
    for (const key of [project.publicKey, `sk_${'0'.repeat(64)}`, 'nonsense']) {
      // untyped: outside the contract (the MCP endpoint)
      const res = await pigeon.request('POST', '/mcp', {
        headers: { accept, authorization: `Bearer ${key}` },
        body: init,
      });
      expectEnvelope(res, 401, 'INVALID_API_KEY');
    }
    const wrong = new Client({ name: 'pigeon-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${pigeon.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer sk_${'1'.repeat(64)}` } },
    });
    await expect(wrong.connect(transport)).rejects.toThrow();
    // untyped: outside the contract (the MCP endpoint)
    const get = await pigeon.request('GET', '/mcp', { headers: { authorization: `Bearer ${project.secretKey}` } });
    expect(expectEnvelope(get, 405, 'BAD_REQUEST').message).toContain('stateless');
    expect(get.headers.get('allow')).toBe('POST');
  });
});
