import { describe, expect, it } from 'vitest';
import { routeNames, shownUrl, streamOf } from './relays.js';

describe('relay routes', () => {
  it('campaigns (and their tests) and workflows are the campaign stream; the rest is transactional', () => {
    expect(['CAMPAIGN', 'CAMPAIGN_TEST', 'WORKFLOW'].map(streamOf)).toEqual(['campaign', 'campaign', 'campaign']);
    expect(['TRANSACTIONAL', 'SMTP'].map(streamOf)).toEqual(['transactional', 'transactional']);
  });

  it("a project's own route first, without relays no longer configured; else the installation's", () => {
    const routes = { transactional: ['a', 'b'], campaign: ['b'] };
    expect(routeNames(routes, ['a', 'b'], 'campaign', null)).toEqual(['b']);
    expect(routeNames(routes, ['a', 'b'], 'campaign', ['a', 'gone'])).toEqual(['a']);
    expect(routeNames(routes, ['a', 'b'], 'transactional', ['gone'])).toEqual(['a', 'b']);
  });

  it('shows an SMTP URL without its password', () => {
    expect(shownUrl('smtps://user:secret@relay.example:465')).toBe('smtps://user:***@relay.example:465');
    expect(shownUrl(undefined)).toBeNull();
  });
});
