import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { type Pigeon, PigeonAccount, PigeonError, type Project, type User } from '../src/index.js';
import { clientOptions, mockPigeonApi, requestId, uuid } from './msw-server.js';

const { route } = mockPigeonApi();
const account = () => new PigeonAccount(clientOptions);

const user: User = {
  id: uuid(1),
  email: 'ada@example.com',
  emailVerified: true,
  createdAt: '2026-12-01T00:00:00.000Z',
};

describe('PigeonAccount (the session routes the console uses)', () => {
  it('signs in with the session cookie, not a key: no Authorization header, same-origin credentials', async () => {
    const login = route('post', '/auth/login', () => HttpResponse.json(user));
    const me = route('get', '/users/@me', () => HttpResponse.json(user));
    expect(await account().auth.login({ email: 'ada@example.com', password: 'correct horse' })).toEqual(user);
    expect(await login[0]?.json()).toEqual({ email: 'ada@example.com', password: 'correct horse' });
    expect(login[0]?.headers.get('authorization')).toBeNull();
    expect(login[0]?.headers.get('x-project-id')).toBeNull();
    expect(login[0]?.credentials).toBe('same-origin');
    expectTypeOf(await account().me.get()).toEqualTypeOf<User>();
    expect(me).toHaveLength(1);
  });

  it('acts in one project through project(id): X-Project-Id on every request of the full client', async () => {
    const contacts = route('get', '/contacts', () =>
      HttpResponse.json({ data: [], cursor: null, hasMore: false, total: 0 }),
    );
    const client = account().project(uuid(7));
    expectTypeOf(client).toEqualTypeOf<Pigeon>();
    await client.contacts.list();
    expect(contacts[0]?.headers.get('x-project-id')).toBe(uuid(7));
    expect(contacts[0]?.headers.get('authorization')).toBeNull();
    expect(contacts[0]?.credentials).toBe('same-origin');
  });

  it('manages projects and members at their paths', async () => {
    const project = { id: uuid(2), name: 'Shop' } as Project;
    const created = route('post', '/users/@me/projects', () => HttpResponse.json(project, { status: 201 }));
    const regenerated = route('post', `/users/@me/projects/${uuid(2)}/regenerate-keys`, () =>
      HttpResponse.json(project),
    );
    const invited = route('post', `/projects/${uuid(2)}/members`, () =>
      HttpResponse.json({ status: 'invited', invitation: { id: uuid(3) } }, { status: 201 }),
    );
    const roled = route('patch', `/projects/${uuid(2)}/members/${uuid(4)}`, () => HttpResponse.json({ role: 'ADMIN' }));
    expect(await account().me.createProject('Shop')).toEqual(project);
    expect(await created[0]?.json()).toEqual({ name: 'Shop' });
    await account().me.regenerateKeys(uuid(2));
    expect(regenerated).toHaveLength(1);
    await account().projects.members.invite(uuid(2), 'bo@example.com');
    expect(await invited[0]?.json()).toEqual({ email: 'bo@example.com', role: 'MEMBER' });
    await account().projects.members.setRole(uuid(2), uuid(4), 'ADMIN');
    expect(await roled[0]?.json()).toEqual({ role: 'ADMIN' });
  });

  it('throws the API error with its code (a signed-out person is 401)', async () => {
    route('get', '/users/@me', () =>
      HttpResponse.json(
        {
          success: false,
          error: { code: 'UNAUTHORIZED', message: 'Sign in first', statusCode: 401, requestId },
          message: 'Sign in first',
          timestamp: new Date().toISOString(),
        },
        { status: 401 },
      ),
    );
    const error = await account()
      .me.get()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect((error as PigeonError).code).toBe('UNAUTHORIZED');
  });
});
