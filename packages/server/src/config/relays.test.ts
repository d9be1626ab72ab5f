import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from './index.js';

const dirs: string[] = [];
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pigeon-relays-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const load = (env: Record<string, string>) => loadConfig({ PIGEON_DATA_DIR: dataDir(), ...env });

describe('relays', () => {
  it('without RELAYS: one relay named for its kind, on both routes, as before', () => {
    const outbox = load({}).mail;
    expect(outbox.relays).toEqual([{ name: 'outbox', kind: 'outbox' }]);
    expect(outbox.routes).toEqual({ transactional: ['outbox'], campaign: ['outbox'] });
    const smtp = load({ SMTP_URL: 'smtp://relay.example:25' }).mail;
    expect(smtp.relays).toEqual([{ name: 'smtp', kind: 'smtp', url: 'smtp://relay.example:25' }]);
    expect(smtp.routes).toEqual({ transactional: ['smtp'], campaign: ['smtp'] });
    expect(load({ SES_REGION: 'eu-west-1' }).mail.relays).toEqual([{ name: 'ses', kind: 'ses' }]);
  });

  it('reads named relays and a route per stream; a route not given is every relay in order', () => {
    const mail = load({
      RELAYS: 'a=smtp://a.example:25, b=smtps://u:p@b.example:465 mail=ses',
      SES_REGION: 'eu-west-1',
      RELAY_ROUTE_CAMPAIGN: 'b, a',
    }).mail;
    expect(mail.relays).toEqual([
      { name: 'a', kind: 'smtp', url: 'smtp://a.example:25' },
      { name: 'b', kind: 'smtp', url: 'smtps://u:p@b.example:465' },
      { name: 'mail', kind: 'ses' },
    ]);
    expect(mail.routes).toEqual({ transactional: ['a', 'b', 'mail'], campaign: ['b', 'a'] });
  });

  it('refuses at start a route naming an unknown relay, and relays it cannot use, each said clearly', () => {
    expect(() => load({ RELAYS: 'a=smtp://a.example', RELAY_ROUTE_TRANSACTIONAL: 'a,z' })).toThrow(
      'RELAY_ROUTE_TRANSACTIONAL: no relay named z (the relays are a)',
    );
    expect(() => load({ RELAYS: 'a=smtp://a.example', SMTP_URL: 'smtp://b.example' })).toThrow('SMTP_URL and RELAYS');
    expect(() => load({ RELAYS: 'a=ses' })).toThrow('RELAYS: a=ses needs SES_REGION');
    expect(() => load({ RELAYS: 'a=smtp://a.example,a=smtp://b.example' })).toThrow('the name a is given twice');
    expect(() => load({ RELAYS: 'a=http://a.example' })).toThrow('a must be an smtp:// or smtps:// URL, or ses');
    expect(() => load({ RELAYS: 'A=smtp://a.example' })).toThrow('"A" is not a relay name');
    expect(() => load({ RELAY_ROUTE_CAMPAIGN: 'a;b' })).toThrow('RELAY_ROUTE_CAMPAIGN');
  });
});
