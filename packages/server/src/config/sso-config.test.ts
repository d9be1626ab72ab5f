import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'pigeon-sso-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const load = (env: Record<string, string>) => loadConfig({ PIGEON_DATA_DIR: dir, ...env });
const problems = (env: Record<string, string>) => {
  try {
    load(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('single sign-on settings', () => {
  it('configures no provider, any domain and no account creation by default', () => {
    expect(load({}).sso).toEqual({ providers: [], allowedEmailDomains: [], createAccounts: false });
  });

  it('builds the OpenID Connect provider and both presets, in a fixed order', () => {
    const { sso } = load({
      OIDC_ISSUER_URL: 'https://sso.example.com/realms/acme/',
      OIDC_CLIENT_ID: 'pigeon',
      OIDC_CLIENT_SECRET: 's3cret',
      OIDC_DISPLAY_NAME: 'Acme SSO',
      GITHUB_CLIENT_ID: 'gh',
      GITHUB_CLIENT_SECRET: 'gh-secret',
      GOOGLE_CLIENT_ID: 'g',
      GOOGLE_CLIENT_SECRET: 'g-secret',
      SSO_ALLOWED_EMAIL_DOMAINS: 'Example.com , example.org',
      SSO_CREATE_ACCOUNTS: 'true',
    });
    expect(sso.providers.map((p) => [p.id, p.name, p.protocol, p.issuer, p.scopes])).toEqual([
      ['oidc', 'Acme SSO', 'oidc', 'https://sso.example.com/realms/acme', 'openid email profile'],
      ['google', 'Google', 'oidc', 'https://accounts.google.com', 'openid email profile'],
      ['github', 'GitHub', 'github', 'https://github.com', 'read:user user:email'],
    ]);
    expect(sso.allowedEmailDomains).toEqual(['example.com', 'example.org']);
    expect(sso.createAccounts).toBe(true);
  });

  it('refuses half a provider, an issuer over plain http off loopback, and scopes without openid', () => {
    expect(problems({ OIDC_ISSUER_URL: 'https://sso.example.com' })).toEqual([
      'OIDC_ISSUER_URL, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET: set all of them, or none',
    ]);
    expect(problems({ GITHUB_CLIENT_ID: 'gh' })).toEqual([
      'GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET: set all of them, or none',
    ]);
    const oidc = { OIDC_CLIENT_ID: 'pigeon', OIDC_CLIENT_SECRET: 's' };
    expect(problems({ ...oidc, OIDC_ISSUER_URL: 'http://sso.example.com' })).toEqual([
      'OIDC_ISSUER_URL: must be an https:// URL (plain http only on a loopback address)',
    ]);
    expect(problems({ ...oidc, OIDC_ISSUER_URL: 'http://127.0.0.1:8080/realms/dev' })).toEqual([]);
    expect(problems({ ...oidc, OIDC_ISSUER_URL: 'https://sso.example.com', OIDC_SCOPES: 'email profile' })).toEqual([
      'OIDC_SCOPES: must include openid',
    ]);
    expect(problems({ SSO_ALLOWED_EMAIL_DOMAINS: 'example.com;evil' })).toEqual([
      'SSO_ALLOWED_EMAIL_DOMAINS: must be a comma-separated list of domains',
    ]);
  });
});
