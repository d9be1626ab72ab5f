import { type Contract, meta } from '@pigeon/contract';
import { initContract } from '@ts-rest/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { splitArgs } from './api-client.js';
import { keyOperations } from './operations.js';

const c = initContract();
const ok = { 200: z.object({}) };
const router = c.router({
  things: {
    update: {
      method: 'PATCH',
      path: '/things/:id',
      pathParams: z.object({ id: z.string() }),
      query: z.object({ dryRun: z.coerce.boolean().optional() }),
      body: z.object({ name: z.string(), note: z.string().optional() }),
      responses: ok,
      summary: 'Rename a thing',
      metadata: meta({ auth: 'dashboard', permission: 'project.use' }),
    },
    replaceTags: {
      method: 'PUT',
      path: '/things/:id/tags',
      pathParams: z.object({ id: z.string() }),
      body: z.array(z.string()),
      responses: ok,
      summary: 'Replace the tags',
      metadata: meta({ auth: 'secret' }),
    },
    clash: {
      method: 'POST',
      path: '/things/:id/copy',
      pathParams: z.object({ id: z.string() }),
      body: z.object({ id: z.string() }),
      responses: ok,
      summary: 'Copy a thing under another id',
      metadata: meta({ auth: 'project', permission: 'project.manage' }),
    },
    send: {
      method: 'POST',
      path: '/things/:id/send',
      pathParams: z.object({ id: z.string() }),
      body: z.object({ at: z.string() }).optional(),
      responses: ok,
      summary: 'Send now or later',
      metadata: meta({ auth: 'track' }),
    },
  },
  console: {
    me: {
      method: 'GET',
      path: '/me',
      responses: ok,
      summary: 'Me',
      metadata: meta({ auth: 'session', permission: 'account' }),
    },
    health: { method: 'GET', path: '/health', responses: ok, summary: 'Up', metadata: meta({ auth: 'none' }) },
    upload: {
      method: 'POST',
      path: '/upload',
      contentType: 'multipart/form-data',
      body: z.object({ file: z.unknown() }),
      responses: ok,
      summary: 'Upload',
      metadata: meta({ auth: 'secret' }),
    },
  },
});
const ops = keyOperations(router as unknown as Contract);
const op = (name: string) => {
  const found = ops.find((o) => o.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};

describe('tools from a contract', () => {
  it('keeps the routes a key may call, named by their router path; session, open and multipart routes are not tools', () => {
    expect(ops.map((o) => o.name)).toEqual(['things_update', 'things_replaceTags', 'things_clash', 'things_send']);
  });

  it('merges path, query and body fields into one strict object and sends each to its part', () => {
    const update = op('things_update');
    expect(update.inputSchema).toMatchObject({
      type: 'object',
      required: ['id', 'name'],
      additionalProperties: false,
    });
    expect(Object.keys(update.inputSchema.properties as object)).toEqual(['id', 'dryRun', 'name', 'note']);
    expect(update.description).toBe('Rename a thing.\n\n(PATCH /things/:id)');
    expect(update.input.safeParse({ id: 'a', name: 'b', other: 1 }).success).toBe(false);
    expect(splitArgs(update, { id: 'a', dryRun: true, name: 'b' })).toEqual({
      params: { id: 'a' },
      query: { dryRun: true },
      headers: {},
      body: { name: 'b' },
    });
  });

  it('takes a body that is not an object, or that shares a field name, as the body argument', () => {
    const tags = op('things_replaceTags');
    expect(tags.bodyNested).toBe(true);
    expect(tags.inputSchema.required).toEqual(['id', 'body']);
    expect(splitArgs(tags, { id: 'a', body: ['x'] }).body).toEqual(['x']);
    const clash = op('things_clash');
    expect(splitArgs(clash, { id: 'a', body: { id: 'b' } })).toMatchObject({ params: { id: 'a' }, body: { id: 'b' } });
  });

  it('makes an optional body optional field by field, and sends none when none is given', () => {
    const send = op('things_send');
    expect(send.inputSchema.required).toEqual(['id']);
    expect(splitArgs(send, { id: 'a' }).body).toBeUndefined();
    expect(splitArgs(send, { id: 'a', at: 'later' }).body).toEqual({ at: 'later' });
  });
});
