import { describe, expect, it } from 'vitest';
import { forbiddenReason, isForbiddenAddress } from './guard.js';
import { classifyStatus, parseRetryAfter, WEBHOOK_MAX_DELAY_MS, webhookRetryDelayMs } from './retry.js';

describe('address policy', () => {
  const refused: Array<[string, RegExp]> = [
    ['0.0.0.0', /unspecified/],
    ['0.1.2.3', /unspecified/],
    ['255.255.255.255', /broadcast/],
    ['127.0.0.1', /loopback/],
    ['127.255.0.9', /loopback/],
    ['10.0.0.1', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.254', /private/],
    ['192.168.1.1', /private/],
    ['169.254.169.254', /link-local/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.254', /carrier-grade NAT/],
    ['224.0.0.1', /multicast/],
    ['239.255.255.250', /multicast/],
    ['192.0.0.8', /reserved/],
    ['192.0.2.10', /reserved/],
    ['198.18.0.1', /reserved/],
    ['198.19.255.1', /reserved/],
    ['198.51.100.7', /reserved/],
    ['203.0.113.9', /reserved/],
    ['240.0.0.1', /reserved/],
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['fc00::1', /unique-local/],
    ['fd00::1', /unique-local/],
    ['fec0::1', /site-local/],
    ['ff02::1', /multicast/],
    ['::ffff:127.0.0.1', /IPv4-mapped.*127\.0\.0\.1/],
    ['::ffff:10.0.0.1', /IPv4-mapped.*10\.0\.0\.1/],
    ['::ffff:8.8.8.8', /IPv4-mapped/],
    ['::ffff:0:10.0.0.1', /IPv4-translated/],
    ['64:ff9b::10.0.0.1', /NAT64 address of 10\.0\.0\.1 \(a private address\)/],
    ['64:ff9b::127.0.0.1', /NAT64.*loopback/],
    ['64:ff9b:1::a00:1', /local-use NAT64/],
    ['2002:0a00:0001::1', /6to4/],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /Teredo/],
    ['2001:db8::1', /reserved/],
    ['2001:2::1', /benchmarking/],
    ['100::1', /special-purpose/],
    ['::7f00:1', /outside global unicast/], // IPv4-compatible ::127.0.0.1
    ['4000::1', /outside global unicast/],
    ['localhost', /not an IP address/],
    ['', /not an IP address/],
  ];

  it.each(refused)('refuses %s', (address, reason) => {
    expect(forbiddenReason(address)).toMatch(reason);
    expect(isForbiddenAddress(address)).toBe(true);
  });

  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '100.63.255.255',
    '100.128.0.1',
    '172.15.255.255',
    '172.32.0.1',
    '169.253.255.255',
    '198.20.0.1',
    '223.255.255.254',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '[2001:4860:4860::8888]',
    '64:ff9b::8.8.8.8',
  ];

  it.each(allowed)('allows %s', (address) => {
    expect(forbiddenReason(address)).toBeNull();
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('retry policy', () => {
  it('classifies statuses', () => {
    expect([200, 201, 204, 299].map(classifyStatus)).toEqual(['success', 'success', 'success', 'success']);
    expect([500, 502, 503, 599, 429, 408].map(classifyStatus)).toEqual(Array(6).fill('retryable'));
    expect([300, 304, 400, 401, 403, 404, 410, 422, 600].map(classifyStatus)).toEqual(Array(9).fill('permanent'));
  });

  it('backs off by four from 30 s, with ±10% jitter, capped at 6 h, honouring a longer Retry-After', () => {
    const middle = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 7].map((a) => webhookRetryDelayMs(a, null, middle))).toEqual([
      30_000,
      120_000,
      480_000,
      1_920_000,
      7_680_000,
      WEBHOOK_MAX_DELAY_MS,
      WEBHOOK_MAX_DELAY_MS,
    ]);
    expect(webhookRetryDelayMs(1, null, () => 0)).toBe(27_000);
    expect(webhookRetryDelayMs(1, null, () => 1)).toBe(33_000);
    expect(webhookRetryDelayMs(20, null, () => 1)).toBe(WEBHOOK_MAX_DELAY_MS);
    expect(webhookRetryDelayMs(1, 90_000, middle)).toBe(90_000);
    expect(webhookRetryDelayMs(1, 10_000, middle)).toBe(30_000);
    expect(webhookRetryDelayMs(1, 7 * 24 * 3_600_000, middle)).toBe(WEBHOOK_MAX_DELAY_MS);
  });

  it('reads Retry-After as seconds or as a date', () => {
    const now = new Date('2026-11-25T10:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Wed, 25 Nov 2026 10:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Wed, 25 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});
