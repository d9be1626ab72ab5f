import { afterAll, expect, it } from 'vitest';
import { newProject } from './accounts.js';
import { api, bodyOf } from './api.js';
import { startTestPigeon } from './helpers.js';

// A clock far from the machine's: every range that defaults to "now" must end at this one.
const MOVED = new Date('2026-03-15T10:30:00.000Z');
const pigeon = await startTestPigeon({ clock: () => MOVED });
afterAll(() => pigeon.stop());

it('default range ends read deps.clock: analytics, event stats and activity stats end at the moved now', async () => {
  const { auth } = await newProject(pigeon);
  const client = api(pigeon, auth);
  const daily = bodyOf(await client.analytics.timeseries(), 200);
  expect({ from: daily.from, to: daily.to }).toEqual({
    from: '2026-02-13T00:00:00.000Z',
    to: '2026-03-16T00:00:00.000Z',
  });
  const hourly = bodyOf(await client.analytics.timeseries({ query: { interval: 'hour' } }), 200);
  expect({ from: hourly.from, to: hourly.to }).toEqual({
    from: '2026-03-14T10:00:00.000Z',
    to: '2026-03-15T11:00:00.000Z',
  });
  expect(bodyOf(await client.analytics.topEvents(), 200).to).toBe('2026-03-15T11:00:00.000Z');
  expect(bodyOf(await client.events.stats(), 200).to).toBe('2026-03-15T11:00:00.000Z');
  expect(bodyOf(await client.activity.stats(), 200).to).toBe('2026-03-15T11:00:00.000Z');
});
