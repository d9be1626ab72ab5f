import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { type CampaignStatsSummary, PigeonError, type Timeseries, type TopEvents } from '../src/index.js';
import { mockPigeonApi } from './msw-server.js';

const { route, pigeon } = mockPigeonApi();

const query = (request: Request | undefined) => Object.fromEntries(new URL(request?.url ?? '').searchParams);
const zero = { sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, complained: 0, unsubscribed: 0 };
const rates = { delivery: 0, open: 0, click: 0, bounce: 0, complaint: 0, unsubscribe: 0 };
const day = '2026-11-24T00:00:00.000Z';
const next = '2026-11-25T00:00:00.000Z';

describe('analytics', () => {
  it('timeseries sends Dates as ISO strings with its filters and returns the series', async () => {
    const series: Timeseries = {
      interval: 'day',
      from: day,
      to: next,
      campaignId: null,
      templateId: null,
      totals: { ...zero, sent: 4 },
      points: [{ timestamp: day, ...zero, sent: 4 }],
    };
    const requests = route('get', '/analytics/timeseries', () => HttpResponse.json(series));
    const result = await pigeon().analytics.timeseries({
      interval: 'day',
      from: new Date(day),
      to: next,
      templateId: '0190c2a4-7b7e-7cc0-9a3f-000000000001',
    });
    expectTypeOf(result).toEqualTypeOf<Timeseries>();
    expect(result).toEqual(series);
    expect(query(requests[0])).toEqual({
      interval: 'day',
      from: day,
      to: next,
      templateId: '0190c2a4-7b7e-7cc0-9a3f-000000000001',
    });
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer sk_test');
  });

  it('topCampaigns, campaignStats and topEvents hit their paths with their queries', async () => {
    const campaigns = route('get', '/analytics/top-campaigns', () =>
      HttpResponse.json({ from: day, to: next, data: [] }),
    );
    const summary: CampaignStatsSummary = { from: day, to: next, campaigns: 0, ...zero, rates };
    const stats = route('get', '/analytics/campaign-stats', () => HttpResponse.json(summary));
    const top: TopEvents = { from: day, to: next, data: [{ name: 'viewed', count: 3 }] };
    const events = route('get', '/analytics/top-events', () => HttpResponse.json(top));
    const client = pigeon();
    expect(await client.analytics.topCampaigns({ sortBy: 'clicked', limit: 5 })).toEqual({
      from: day,
      to: next,
      data: [],
    });
    expect(query(campaigns[0])).toEqual({ sortBy: 'clicked', limit: '5' });
    expect(await client.analytics.campaignStats()).toEqual(summary);
    expect(query(stats[0])).toEqual({});
    expect(await client.analytics.topEvents({ type: 'all' })).toEqual(top);
    expect(query(events[0])).toEqual({ type: 'all' });
  });

  it('refuses an invalid Date before any request, and surfaces a 422 as PigeonError', async () => {
    await expect(pigeon().analytics.timeseries({ from: new Date('nope') })).rejects.toThrow(TypeError);
    route('get', '/analytics/timeseries', () =>
      HttpResponse.json(
        {
          success: false,
          error: {
            code: 'VALIDATION_ERROR',
            message: 'The range holds 1416 hours; at most 1000 per call',
            statusCode: 422,
            requestId: '0190c2a4-7b7e-7cc0-9a3f-1c2d3e4f5a6b',
          },
          message: 'The range holds 1416 hours; at most 1000 per call',
          timestamp: day,
        },
        { status: 422 },
      ),
    );
    const err = await pigeon()
      .analytics.timeseries({ interval: 'hour', from: '2026-01-01T00:00:00Z' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PigeonError);
    expect((err as PigeonError).code).toBe('VALIDATION_ERROR');
  });
});
