import { randomBytes } from 'node:crypto';
import { seededEmail } from '../fixtures/contacts-1m.mjs';

/**
 * POST /contacts (upsert by email) with 1,000,000 contacts present: half the requests update a
 * random seeded contact (200), half create a new one with a never-used email (201). The status
 * split is in the report's notes.
 */
export default {
  name: 'contacts-upsert',
  description: 'POST /contacts, 50% updates of seeded contacts / 50% new emails, 1,000,000 contacts',
  fixtures: ['contacts-1m'],
  target: { metric: 'reqPerSec', min: 1000, unit: 'req/s', label: 'upserts ≥ 1,000 req/s' },
  async setup(ctx) {
    const seeded = ctx.fixtures['contacts-1m'].seeded;
    if (!seeded) throw new Error('no seeded contacts to update');
    const tag = randomBytes(4).toString('hex');
    let n = 0;
    ctx.state.nextBody = () => {
      const update = Math.random() < 0.5;
      const email = update ? seededEmail(1 + Math.floor(Math.random() * seeded)) : `new-${tag}-${++n}@upsert.example`;
      return JSON.stringify({
        email,
        data: { plan: Math.random() < 0.2 ? 'pro' : 'free', age: Math.floor(Math.random() * 80) },
      });
    };
    // Both paths answer as expected before the load starts.
    const headers = ctx.auth;
    const created = await ctx.fetch('/contacts', {
      method: 'POST',
      headers,
      json: { email: `probe-${tag}@upsert.example` },
    });
    const updated = await ctx.fetch('/contacts', {
      method: 'POST',
      headers,
      json: { email: seededEmail(1), data: { plan: 'pro' } },
    });
    if (created.status !== 201 || updated.status !== 200)
      throw new Error(`expected 201 and 200, got ${created.status} and ${updated.status}: ${await updated.text()}`);
  },
  request: (ctx) => ({
    requests: [
      {
        method: 'POST',
        path: '/contacts',
        headers: { ...ctx.auth, 'content-type': 'application/json' },
        setupRequest: (req) => ({ ...req, body: ctx.state.nextBody() }),
      },
    ],
  }),
};
