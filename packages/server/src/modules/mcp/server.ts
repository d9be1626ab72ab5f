import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { contract } from '@pigeon/contract';
import type { ZodError } from 'zod';
import { VERSION } from '../../version.js';
import { type ApiAnswer, type ApiTarget, ApiUnreachable, callOperation, callRoute } from './api-client.js';
import { keyOperations, type Operation } from './operations.js';

let cached: { byName: Map<string, Operation>; tools: Tool[] } | undefined;

/** The tools, built from the contract once per process. */
function catalogue() {
  if (!cached) {
    const operations = keyOperations();
    cached = {
      byName: new Map(operations.map((op) => [op.name, op])),
      tools: operations.map((op) => ({
        name: op.name,
        title: op.title,
        description: op.description,
        inputSchema: op.inputSchema,
        annotations: {
          title: op.title,
          readOnlyHint: op.route.method === 'GET',
          destructiveHint: op.route.method === 'DELETE',
          idempotentHint: op.route.method === 'GET' || op.route.method === 'PUT' || op.route.method === 'DELETE',
          openWorldHint: false,
        },
      })),
    };
  }
  return cached;
}

/** An MCP server whose tools and resources are Pigeon's API, called as `target`. */
export function createMcpServer(target: ApiTarget): Server {
  const server = new Server(
    { name: 'pigeon', title: 'Pigeon', version: VERSION },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Pigeon is an email platform. Each tool is one operation of its HTTP API, called with your project key: ' +
        'send email (emails_send), track events (events_track), manage contacts, templates, campaigns, segments, ' +
        'workflows and webhooks, and read what became of each email (sentEmails_list, sentEmails_get).',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: catalogue().tools }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callTool(target, request.params.name, request.params.arguments ?? {}, extra.signal),
  );
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    readResource(target, request.params.uri, extra.signal),
  );
  return server;
}

async function callTool(
  target: ApiTarget,
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const op = catalogue().byName.get(name);
  if (!op) throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${name}": tools/list names every tool`);
  const checked = op.input.safeParse(args);
  // Refused before any request: the model reads what to correct, and nothing was done.
  if (!checked.success) return errorResult(`Invalid arguments for ${name}: ${issues(checked.error)}`);
  // A path segment `.` or `..` would be resolved away by the URL and reach another route.
  const dotted = [...op.partOf].find(([key, part]) => part === 'params' && (args[key] === '.' || args[key] === '..'));
  if (dotted) return errorResult(`Invalid arguments for ${name}: ${dotted[0]}: "." and ".." are not accepted`);
  const answer = await callOperation(target, op, args, signal).catch((err: unknown) => {
    if (err instanceof ApiUnreachable) return err;
    throw err;
  });
  if (answer instanceof ApiUnreachable) return errorResult(answer.message);
  return {
    content: [{ type: 'text', text: answerText(answer) }],
    ...(answer.status >= 400 ? { isError: true } : {}),
  };
}

const issues = (error: ZodError) =>
  error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(arguments)'}: ${i.message}`).join('; ');

const errorResult = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/** The response body as JSON; a body-less answer says its status. */
function answerText(answer: ApiAnswer): string {
  if (answer.body === null) return JSON.stringify({ status: answer.status });
  return typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body, null, 2);
}

const RECENT_EMAILS = 25;

const RESOURCES = [
  {
    uri: 'pigeon://templates',
    name: 'templates',
    title: 'Templates',
    description: "The project's email templates (first page, newest first)",
    mimeType: 'application/json',
  },
  {
    uri: 'pigeon://emails/recent',
    name: 'recent-emails',
    title: 'Recent emails',
    description: `The project's latest ${RECENT_EMAILS} emails and what became of each`,
    mimeType: 'application/json',
  },
];

const RESOURCE_TEMPLATES = [
  {
    uriTemplate: 'pigeon://templates/{id}',
    name: 'template',
    title: 'Template',
    description: 'One email template: subject, sender, body and type',
    mimeType: 'application/json',
  },
];

async function readResource(target: ApiTarget, uri: string, signal: AbortSignal) {
  const answer = await fetchResource(target, uri, signal).catch((err: unknown) => {
    throw err instanceof ApiUnreachable ? new McpError(ErrorCode.InternalError, err.message) : err;
  });
  if (answer.status >= 400) {
    const code = answer.status === 404 ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams;
    throw new McpError(code, `Reading ${uri} failed: ${answerText(answer)}`);
  }
  return { contents: [{ uri, mimeType: 'application/json', text: answerText(answer) }] };
}

/** The MCP specification's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

function fetchResource(target: ApiTarget, uri: string, signal: AbortSignal): Promise<ApiAnswer> {
  if (uri === 'pigeon://templates') return callRoute(target, contract.templates.list, {}, signal);
  if (uri === 'pigeon://emails/recent') {
    return callRoute(target, contract.sentEmails.list, { query: { limit: RECENT_EMAILS } }, signal);
  }
  const template = /^pigeon:\/\/templates\/([^/?#]+)$/.exec(uri);
  if (template?.[1]) {
    return callRoute(target, contract.templates.get, { params: { id: decodeURIComponent(template[1]) } }, signal);
  }
  throw new McpError(
    RESOURCE_NOT_FOUND,
    `Unknown resource ${uri}: resources/list and resources/templates/list name them`,
  );
}
