import { HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { type ActivityItem, Pigeon } from '../src/index.js';
import { BASE, mockPigeonApi } from './msw-server.js';

const { route } = mockPigeonApi();
const pigeon = () => new Pigeon({ apiKey: 'sk_test', baseUrl: BASE });

const item = (n: number): ActivityItem => ({
  id: `0190c2a4-7b7e-7cc0-9a3f-${String(n).padStart(12, '0')}`,
  type: 'email.click',
  name: 'email.click',
  contactId: null,
  contactEmail: null,
  emailId: null,
  subject: 'News',
  link: 'https://example.com',
  data: {},
  createdAt: '2026-11-23T10:00:00.000Z',
});

describe('activity', () => {
  it('sends the type filter comma-separated and follows cursors in all()', async () => {
    const requests = route('get', '/activity', (_req, n) =>
      HttpResponse.json(
        n === 0
          ? { data: [item(1)], cursor: 'c1', hasMore: true, total: 2 }
          : { data: [item(2)], cursor: null, hasMore: false, total: 0 },
      ),
    );
    const seen: string[] = [];
    for await (const a of pigeon().activity.all({ types: ['email.open', 'email.click'], limit: 1 })) seen.push(a.id);
    expect(seen).toHaveLength(2);
    const urls = requests.map((r) => new URL(r.url));
    expect(urls[0]?.searchParams.get('types')).toBe('email.open,email.click');
    expect(urls[1]?.searchParams.get('cursor')).toBe('c1');
  });

  it('asks for a recent count over the given minutes', async () => {
    const requests = route('get', '/activity/recent-count', () =>
      HttpResponse.json({ count: 3, since: '2026-11-23T09:00:00.000Z' }),
    );
    expect(await pigeon().activity.recentCount({ minutes: 15, types: ['email.bounce'] })).toEqual({
      count: 3,
      since: '2026-11-23T09:00:00.000Z',
    });
    const url = new URL(requests[0]?.url ?? '');
    expect([url.searchParams.get('minutes'), url.searchParams.get('types')]).toEqual(['15', 'email.bounce']);
  });
});
