import { describe, expect, it } from 'vitest';
import { isDeferral } from './governor.js';
import { GroupRate } from './group-rate.js';
import { groupOfMxHost, groupOfMxRecords } from './groups.js';

describe('destination groups by MX host', () => {
  it.each([
    ['alt1.gmail-smtp-in.l.google.com', 'gmail'],
    ['aspmx.l.google.com.', 'gmail'],
    ['mx1.googlemail.com', 'gmail'],
    ['example-com.mail.protection.outlook.com', 'microsoft'],
    ['hotmail-com.olc.protection.outlook.com', 'microsoft'],
    ['mx.hotmail.com', 'microsoft'],
    ['mta5.am0.yahoodns.net', 'yahoo'],
    ['mx-aol.mail.gm0.yahoodns.net', 'yahoo'],
    ['mx01.mail.icloud.com', 'apple'],
    ['mx.me.com', 'apple'],
    ['mx.example.com', 'other'],
    ['notgoogle.com', 'other'],
    ['google.com.evil.example', 'other'],
  ])('%s is %s', (host, group) => {
    expect(groupOfMxHost(host)).toBe(group);
  });

  it('takes the most preferred MX host, and calls a null MX or none other', () => {
    expect(groupOfMxRecords(['20 mx.example.com', '5 alt1.gmail-smtp-in.l.google.com'])).toBe('gmail');
    expect(groupOfMxRecords(['0 .'])).toBe('other');
    expect(groupOfMxRecords([])).toBe('other');
  });
});

describe('a group rate (AIMD)', () => {
  const config = { enabled: true, maxRate: 100, minRate: 1, decreaseFactor: 0.5, recoveryPerSecond: 10 };

  it('passes a burst at its ceiling, then gives each message over it a slot of its own', () => {
    const rate = new GroupRate(config);
    const now = 1_000_000;
    let passed = 0;
    const slots: number[] = [];
    for (let i = 0; i < 150; i++) {
      const later = rate.admit(now);
      if (later === undefined) passed++;
      else slots.push(later);
    }
    expect(passed).toBeGreaterThanOrEqual(100);
    expect(passed).toBeLessThan(150);
    expect(new Set(slots).size).toBe(slots.length);
    expect(slots.every((s) => s > now)).toBe(true);
  });

  it('halves to the rate it was really sending at on a deferral, once a second, and grows back with accepted mail', () => {
    const rate = new GroupRate(config);
    let now = 2_000_500;
    for (let i = 0; i < 20; i++) rate.admit(now);
    expect(rate.deferred(now)).toBe(true);
    expect(rate.rate).toBeLessThanOrEqual(10);
    const halved = rate.rate;
    expect(rate.deferred(now + 10)).toBe(false);
    expect(rate.rate).toBe(halved);
    now += 1000;
    expect(rate.deferred(now)).toBe(true);
    expect(rate.rate).toBeLessThan(halved);
    for (let i = 0; i < 50; i++) {
      now += 1000;
      rate.deferred(now);
    }
    expect(rate.rate).toBe(config.minRate);
    for (let i = 0; i < 30; i++) {
      now += 1000;
      rate.accepted(now);
    }
    expect(rate.rate).toBe(config.maxRate);
  });
});

describe('a deferral', () => {
  const reply = (responseCode: number, response: string, command = 'RCPT TO') =>
    Object.assign(new Error(response), { responseCode, response, command });

  it.each([
    [reply(451, '451 4.7.28 Our system has detected an unusual rate of mail'), true],
    [reply(421, '421-4.7.0 [TSS04] Messages temporarily deferred', 'DATA'), true],
    [reply(450, '450 4.7.1 Too many connections'), true],
    [reply(421, '421 Service not available', 'DATA'), true],
    [reply(451, '451 Try again later', 'DATA'), false],
    [reply(452, '452 4.2.2 Mailbox full'), false],
    [reply(550, '550 5.7.1 Rejected'), false],
    [reply(421, '421 4.7.0 Try again later', 'CONN'), false],
  ])('%s: %s', (err, deferral) => {
    expect(isDeferral(err)).toBe(deferral);
  });
});
